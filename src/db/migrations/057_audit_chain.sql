-- Issue 55, items 3 and 4: the audit trail as a hash chain per workspace, and its retention.
--
-- Each record carries its place in its workspace's chain (chain_seq: 1, 2, 3… with no gap and no
-- fork), the hash of the record before it (previous_hash) and its own hash (SHA-256 over the RFC
-- 8785 canonical JSON of its exported fields; src/audit/chain.ts). One head row per workspace
-- holds the last place and hash: a writer takes it with an upsert, which locks it until the
-- writer's transaction ends, so writers of one workspace chain one after another on PostgreSQL and
-- PGlite alike; the unique index turns any fork that slipped through into an error.
--
-- Records written before this migration stay outside the chain (the three columns null): a hash
-- computed today over last year's record would prove only that it did not change since today,
-- and the canonical form is computed in the application, not in SQL. The chain begins at each
-- workspace's first record after the upgrade (docs/audit.md, "The record format").
ALTER TABLE audit_events
  ADD COLUMN chain_seq bigint,
  ADD COLUMN previous_hash text,
  ADD COLUMN hash text;
CREATE UNIQUE INDEX audit_events_chain_idx ON audit_events (workspace_id, chain_seq) WHERE chain_seq IS NOT NULL;

CREATE TABLE audit_chain_heads (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  last_seq bigint NOT NULL,
  -- Null until the first record: a head row is made by the first writer, which may be a batch.
  last_hash text,
  -- The hash before last_hash: what the record at last_seq carries as its previous_hash.
  previous_hash text
);

-- Days an audit record is kept (at least 30); null: kept for good, as before this setting.
ALTER TABLE workspaces ADD COLUMN audit_retention_days integer CHECK (audit_retention_days >= 30);

-- The service's Ed25519 keys that sign the hourly digests. The private key is sealed like the
-- other secrets at rest (ENCRYPTION_KEY, or a key derived from SESSION_SECRET; re-sealed by npm run
-- secrets:reencrypt); the public key (the JWK's x) is published with its id. A retired key signs
-- no more and stays listed, so digests it signed still verify.
CREATE TABLE audit_signing_keys (
  kid text PRIMARY KEY CHECK (length(kid) <= 100),
  public_key text NOT NULL,
  private_key_enc text NOT NULL,
  created_at timestamptz NOT NULL,
  retired_at timestamptz
);

-- A signed digest of each workspace's chain per closed hour: the segment of the chain after the
-- previous digest up to the last record created before the hour's end, and the previous digest's
-- hash, so the digests are a chain of their own.
CREATE TABLE audit_digests (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  hour timestamptz NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  first_id uuid NOT NULL,
  last_id uuid NOT NULL,
  record_count integer NOT NULL,
  last_hash text NOT NULL,
  previous_digest_hash text,
  digest_hash text NOT NULL,
  kid text NOT NULL REFERENCES audit_signing_keys (kid),
  signature text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, hour)
);
