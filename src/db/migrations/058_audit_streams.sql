-- Audit streams (issue 55): a workspace's audit trail delivered, as it grows, to a SIEM (generic
-- HTTPS, Splunk HTTP Event Collector, Datadog logs intake). The credential (the HTTPS stream's
-- signing secret, Splunk's HEC token, Datadog's API key) is sealed like webhook signing secrets
-- (AES-256-GCM, src/lib/crypto.ts, bound to the stream's id), never kept in plain text.
-- cursor_seq: the place in the workspace's audit chain (audit_events.chain_seq, migration 057: one
-- order per workspace, no gap, a place taken only after the one before committed) of the last
-- record the receiver acknowledged (2xx); delivery resumes after it.
-- run_token: the live delivery job chain; a job carrying another token ends (a newer chain runs).
CREATE TABLE audit_streams (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('https', 'splunk', 'datadog')),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  url text NOT NULL CHECK (length(url) <= 2000),
  credential_enc text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  paused_reason text CHECK (paused_reason IN ('admin', 'failing')),
  cursor_seq bigint NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  failing_since timestamptz,
  next_attempt_at timestamptz,
  polled_at timestamptz,
  last_delivery_at timestamptz,
  last_delivered_record_at timestamptz,
  last_status_code integer,
  last_error text,
  run_token uuid,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((status = 'paused') = (paused_reason IS NOT NULL))
);
CREATE INDEX audit_streams_workspace_idx ON audit_streams (workspace_id, created_at, id);
CREATE INDEX audit_streams_active_idx ON audit_streams (polled_at) WHERE status = 'active';
