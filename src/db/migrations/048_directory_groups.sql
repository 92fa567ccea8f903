-- SCIM 2.0 Groups (issue 41): the directory's groups and who is in them. A group's displayName is
-- unique in its workspace (case-insensitively): one workspace setting names the admins' group by it.
CREATE TABLE directory_groups (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 200),
  external_id text CHECK (external_id IS NULL OR char_length(external_id) BETWEEN 1 AND 254),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX directory_groups_name_key ON directory_groups (workspace_id, lower(display_name));
CREATE INDEX directory_groups_workspace_idx ON directory_groups (workspace_id, created_at, id);

CREATE TABLE directory_group_members (
  group_id uuid NOT NULL REFERENCES directory_groups (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX directory_group_members_user_idx ON directory_group_members (user_id);
