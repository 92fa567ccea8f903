-- SCIM 2.0 (issue 41): a company directory (Okta, Entra ID) provisions members. What the directory
-- calls a person is kept beside the member: its userName (compared case-insensitively, unique in
-- the workspace), its externalId (unique in the workspace: one directory identity per member), the
-- name parts it sends, and when the directory took the member over (provisioned or linked): only
-- such members get their role from the directory's admin group.
ALTER TABLE users
  ADD COLUMN directory_user_name text CHECK (directory_user_name IS NULL OR char_length(directory_user_name) BETWEEN 1 AND 254),
  ADD COLUMN directory_external_id text CHECK (directory_external_id IS NULL OR char_length(directory_external_id) BETWEEN 1 AND 254),
  ADD COLUMN directory_linked_at timestamptz,
  ADD COLUMN given_name text CHECK (given_name IS NULL OR char_length(given_name) <= 200),
  ADD COLUMN family_name text CHECK (family_name IS NULL OR char_length(family_name) <= 200);

-- A directory's lookups before each create (Okta: `userName eq "…"`) read one row through these.
CREATE UNIQUE INDEX users_directory_user_name_key
  ON users (workspace_id, lower(coalesce(directory_user_name, email))) WHERE status <> 'removed';
CREATE UNIQUE INDEX users_directory_external_id_key
  ON users (workspace_id, directory_external_id) WHERE status <> 'removed' AND directory_external_id IS NOT NULL;
CREATE INDEX users_workspace_email_idx ON users (workspace_id, email) WHERE status <> 'removed';
