-- Sign-in through a workspace's SSO connection (issue 53): the flows a browser started, and the
-- SAML assertions already accepted.
--
-- sso_flows: one row per sign-in (or an admin's test sign-in) sent to the provider, keyed by the
-- hash of the state the browser holds in an HttpOnly cookie; single use (used_at, set in the one
-- UPDATE … RETURNING that consumes it) and 10 minutes. The PKCE verifier is sealed under the
-- at-rest key bound to the state's hash: a copy of the table alone does not finish a sign-in.
CREATE TABLE sso_flows (
  state_hash text PRIMARY KEY,
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('sign_in', 'test')),
  -- the admin who started a test sign-in
  admin_id uuid REFERENCES users (id) ON DELETE CASCADE,
  oidc_nonce text CHECK (length(oidc_nonce) <= 200),
  oidc_verifier_enc text,
  saml_request_id text CHECK (length(saml_request_id) <= 200),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL,
  CHECK ((purpose = 'test') = (admin_id IS NOT NULL)),
  CHECK ((oidc_nonce IS NULL) = (oidc_verifier_enc IS NULL)),
  CHECK ((oidc_nonce IS NULL) <> (saml_request_id IS NULL))
);
CREATE INDEX sso_flows_expires_idx ON sso_flows (expires_at);
CREATE INDEX sso_flows_connection_idx ON sso_flows (connection_id);

-- SAML assertion IDs accepted, per IdP entity ID, kept until the assertion's NotOnOrAfter plus the
-- clock skew: a second presentation (through this instance or another) conflicts on the key.
CREATE TABLE sso_assertions (
  idp_entity_id text NOT NULL CHECK (length(idp_entity_id) <= 1024),
  assertion_id text NOT NULL CHECK (length(assertion_id) <= 256),
  keep_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (idp_entity_id, assertion_id)
);
CREATE INDEX sso_assertions_keep_until_idx ON sso_assertions (keep_until);
