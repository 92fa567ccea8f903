-- An Idempotency-Key claim is a lease: its owner (one request) renews `locked_until` while it
-- works, so a claim left by a process that died is taken over once the lease runs out (seconds),
-- not after a fixed 10 minutes. Stored answers are encrypted from now on; rows written before
-- held replayable answers in plaintext (live signup links) and are dropped — a retry with such
-- a key runs again, which re-sends the same invitation with a fresh link.
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys ADD COLUMN owner uuid, ADD COLUMN locked_until timestamptz;
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE text USING NULL;
