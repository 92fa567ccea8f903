-- Invite links have a name (issue 43): two links with the same settings are told apart in the
-- console, in Activity and in events by what the admin called them ("Spring fair stand"). Optional:
-- links made before this, or through a door that gives none, have none.
ALTER TABLE invite_links ADD COLUMN name text CHECK (name IS NULL OR char_length(name) BETWEEN 1 AND 100);
