-- Member search (GET /api/users?q=): the members of a workspace whose e-mail address or name
-- begins with the words typed, case-insensitively (e-mail addresses are stored lower-cased).
-- text_pattern_ops lets LIKE 'prefix%' read a range of the index, whatever the collation.
CREATE INDEX users_workspace_email_prefix_idx ON users (workspace_id, email text_pattern_ops)
  WHERE status <> 'removed';
CREATE INDEX users_workspace_name_prefix_idx ON users (workspace_id, lower(name) text_pattern_ops)
  WHERE status <> 'removed';
