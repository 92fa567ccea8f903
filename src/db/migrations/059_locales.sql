-- Languages (issue 54). Whoever reads, reads in theirs: an invitation and an invite link keep the
-- locale they were made in (a resend and a reminder use it again), a member may choose their own,
-- and a workspace has a default locale and an IANA time zone for the dates its e-mails write.
-- BCP 47 tags as given (matched against the catalogues when read); null: not chosen.
ALTER TABLE invitations ADD COLUMN locale text;
ALTER TABLE invite_links ADD COLUMN locale text;
ALTER TABLE users ADD COLUMN locale text;
ALTER TABLE workspaces ADD COLUMN locale text NOT NULL DEFAULT 'en';
ALTER TABLE workspaces ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';
