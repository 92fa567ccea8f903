-- Initial schema. Constraints live here, not only in code: one pending invitation per
-- workspace + e-mail, unique token hashes, one active user per e-mail across the service.
-- Timestamps are written by the application (its clock), so expiry is testable with a fake clock.

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  workos_organization_id text UNIQUE,
  created_at timestamptz NOT NULL
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 254),
  name text,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  -- removed users stay for the audit trail; their e-mail may be invited again
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'removed')),
  workos_user_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email) WHERE status <> 'removed';
CREATE INDEX users_workspace_idx ON users (workspace_id, created_at, id);

CREATE TABLE sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  method text NOT NULL CHECK (method IN ('signup', 'login_link', 'identity_provider')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_user_idx ON sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE invitations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 254),
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  -- 'expired' is written lazily; a pending row past expires_at is read as expired
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked', 'expired')),
  token_hash text UNIQUE,
  expires_at timestamptz NOT NULL,
  invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
  invited_by_api_key uuid,
  delivery_status text NOT NULL DEFAULT 'pending' CHECK (delivery_status IN ('pending', 'sent', 'failed', 'identity_provider')),
  delivery_error text,
  delivery_attempts integer NOT NULL DEFAULT 0,
  idp_invitation_id text,
  last_sent_at timestamptz,
  accepted_at timestamptz,
  accepted_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX invitations_one_pending ON invitations (workspace_id, email) WHERE status = 'pending';
CREATE INDEX invitations_workspace_idx ON invitations (workspace_id, created_at DESC, id DESC);

CREATE TABLE login_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);

CREATE TABLE idempotency_keys (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  operation text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status_code integer,
  response jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, operation, key)
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  name text NOT NULL,
  prefix text NOT NULL UNIQUE,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at DESC);

CREATE TABLE oauth_states (
  state_hash text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('identity_provider', 'slack')),
  workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);

CREATE TABLE chat_installations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  platform text NOT NULL DEFAULT 'slack' CHECK (platform IN ('slack')),
  team_id text NOT NULL,
  team_name text,
  bot_user_id text,
  app_id text,
  scopes text NOT NULL DEFAULT '',
  -- AES-256-GCM: base64(iv | tag | ciphertext); never the plaintext token
  bot_token_enc text NOT NULL,
  installed_by uuid REFERENCES users (id) ON DELETE SET NULL,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (platform, team_id)
);

CREATE TABLE chat_events (
  event_id text PRIMARY KEY,
  team_id text,
  type text NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'received' CHECK (status IN ('received', 'processed', 'failed', 'ignored')),
  error text,
  received_at timestamptz NOT NULL,
  processed_at timestamptz
);
CREATE INDEX chat_events_pending_idx ON chat_events (received_at) WHERE status = 'received';

CREATE TABLE audit_events (
  id bigserial PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  action text NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system', 'chat_platform')),
  actor_id text,
  actor_label text,
  target_type text,
  target_id text,
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, id DESC);
CREATE INDEX audit_events_target_idx ON audit_events (workspace_id, target_type, target_id, id DESC);
