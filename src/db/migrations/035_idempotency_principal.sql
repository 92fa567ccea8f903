-- An Idempotency-Key belongs to the principal that sent it (a person, or an API key), not to the
-- workspace: another admin, or another key, sending the same key runs its own request and never
-- receives the first one's stored answer (which can hold a live signup link). `principal` is
-- `user:<id>` or `key:<id>` (src/idempotency). Rows written before name no principal and could
-- be anyone's: they are dropped, as migration 003 did — a retry with such a key runs again, which
-- re-sends the same invitation with a fresh link.
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys ADD COLUMN principal text NOT NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, principal, operation, key);
