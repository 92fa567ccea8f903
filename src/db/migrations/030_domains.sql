-- Join by verified domain (issue 28, part 3). A workspace adds a domain, publishes the TXT record
-- the service gives (`_workspace-verification.<domain> TXT "ws-verify=<token>"`) and the service
-- checks it: pending → verified, or failed after 30 days pending. A domain is verified by at most
-- one workspace (the partial unique index); each workspace adds a domain once. The token is
-- published in public DNS by design: it is kept as it is, random per domain (256 bits).
CREATE TABLE workspace_domains (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  domain text NOT NULL CHECK (domain = lower(domain) AND length(domain) <= 253),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
  policy text NOT NULL DEFAULT 'off' CHECK (policy IN ('off', 'suggest', 'auto_join')),
  token text NOT NULL CHECK (length(token) BETWEEN 32 AND 100),
  -- the last look at DNS (a job or an admin's "verify now") and, when it found no record, why
  checked_at timestamptz,
  check_error text CHECK (length(check_error) <= 500),
  verified_at timestamptz,
  failed_at timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (workspace_id, domain)
);
CREATE UNIQUE INDEX workspace_domains_one_verified ON workspace_domains (domain) WHERE status = 'verified';
CREATE INDEX workspace_domains_workspace_idx ON workspace_domains (workspace_id, created_at, id);
-- the re-check job takes the pending domains looked at longest ago
CREATE INDEX workspace_domains_pending_idx ON workspace_domains (checked_at NULLS FIRST, id) WHERE status = 'pending';

-- A person who proved an address at a verified domain (a link e-mailed to it): only the token's
-- hash is kept; it works once, for a short time.
CREATE TABLE domain_join_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE,
  domain_id uuid NOT NULL REFERENCES workspace_domains (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 254),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX domain_join_tokens_email_idx ON domain_join_tokens (email, created_at);
CREATE INDEX domain_join_tokens_expiry_idx ON domain_join_tokens (expires_at);
