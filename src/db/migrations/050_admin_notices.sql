-- Issue 43: each admin chooses how they hear of new invite requests — by e-mail, in Slack (the
-- default, as before) or not at all — and hears at most once an hour, a digest after that.
-- last_notice_at: when this admin was last told (a notice or a digest); digest_due_at: when the
-- digest of what arrived since is due (NULL: none held). A row is made on first use.
CREATE TABLE admin_notice_settings (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  invite_requests text NOT NULL DEFAULT 'slack' CHECK (invite_requests IN ('email', 'slack', 'off')),
  last_notice_at timestamptz,
  digest_due_at timestamptz
);
CREATE INDEX admin_notice_settings_digest_due_idx ON admin_notice_settings (digest_due_at)
  WHERE digest_due_at IS NOT NULL;
-- Which admin was told of which request, once: told_at is set when the notice (immediate) or the
-- digest that carries it is claimed; NULL while it waits for the digest.
CREATE TABLE admin_request_notices (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  request_id uuid NOT NULL REFERENCES invite_requests (id) ON DELETE CASCADE,
  immediate boolean NOT NULL,
  told_at timestamptz,
  PRIMARY KEY (user_id, request_id)
);
CREATE INDEX admin_request_notices_request_idx ON admin_request_notices (request_id);
