-- SCIM 2.0 settings of a workspace (issue 41): which directory group's members are admins (by its
-- displayName; none: the directory sets no roles), and whether a member the directory creates gets
-- a welcome e-mail with a sign-in link (off unless an admin turns it on).
ALTER TABLE workspaces
  ADD COLUMN directory_admin_group text CHECK (directory_admin_group IS NULL OR char_length(directory_admin_group) BETWEEN 1 AND 200),
  ADD COLUMN directory_welcome_email boolean NOT NULL DEFAULT false;

-- What a directory does through SCIM comes through its own door, `directory`.
ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_source_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_source_check
  CHECK (source IN ('api', 'mcp', 'chat', 'web', 'system', 'directory'));
