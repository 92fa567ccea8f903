-- Events out (issue 16). The audit trail is the outbox: each row that is in the event catalogue
-- carries its event type, and who acted through which door (source), the request and the
-- Idempotency-Key that caused it; it is written in the same transaction as the change, and so
-- are its webhook deliveries (one row per subscribed endpoint) and the job that sends them.
ALTER TABLE audit_events
  ADD COLUMN event_type text,
  ADD COLUMN source text NOT NULL DEFAULT 'system' CHECK (source IN ('api', 'mcp', 'chat', 'web', 'system')),
  ADD COLUMN request_id text,
  ADD COLUMN idempotency_key text;
-- The pull feed reads a workspace's events oldest first after a cursor.
CREATE INDEX audit_events_feed_idx ON audit_events (workspace_id, id) WHERE event_type IS NOT NULL;

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url text NOT NULL CHECK (length(url) <= 2000),
  description text,
  -- null: every event type
  event_types text[],
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- AES-256-GCM (src/lib/crypto.ts), never the plaintext signing secret; the previous one signs
  -- too until previous_secret_until (rotation overlap)
  secret_enc text NOT NULL,
  previous_secret_enc text,
  previous_secret_until timestamptz,
  -- the first failed attempt since the last success; an endpoint failing that long is disabled
  failing_since timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_workspace_idx ON webhook_endpoints (workspace_id, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  event_id bigint NOT NULL REFERENCES audit_events (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
