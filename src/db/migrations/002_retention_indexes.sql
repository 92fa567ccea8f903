-- The per-user login-link limit counts a user's recent tokens (user_id = $1 AND created_at > $2).
CREATE INDEX login_tokens_user_created_idx ON login_tokens (user_id, created_at);
-- The retention sweep (src/housekeeping/retention.ts) finds expired rows by these, in batches.
CREATE INDEX login_tokens_expires_idx ON login_tokens (expires_at);
CREATE INDEX oauth_states_expires_idx ON oauth_states (expires_at);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
CREATE INDEX chat_events_received_idx ON chat_events (received_at);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
