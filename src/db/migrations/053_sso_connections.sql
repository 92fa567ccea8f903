-- Single sign-on of the company's own (issue 53): a workspace's connections to its identity
-- provider, OpenID Connect or SAML 2.0. The settings of the connection's protocol are set, the
-- other's are null. The OIDC client secret is sealed like webhook signing secrets
-- (AES-256-GCM, src/lib/crypto.ts, bound to the connection's id), never kept in plain text.
-- The metadata columns are filled later by discovery and metadata refresh.
CREATE TABLE sso_connections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
  accounts text NOT NULL DEFAULT 'existing' CHECK (accounts IN ('existing', 'create')),
  -- the role of a member made at first sign-in: only when accounts are created
  default_role text CHECK (default_role IN ('admin', 'member')),
  required boolean NOT NULL DEFAULT false,
  oidc_issuer text CHECK (length(oidc_issuer) <= 2000),
  oidc_client_id text CHECK (length(oidc_client_id) <= 255),
  oidc_client_secret_enc text,
  oidc_tenant_id uuid,
  oidc_metadata jsonb,
  oidc_metadata_fetched_at timestamptz,
  saml_idp_metadata_url text CHECK (length(saml_idp_metadata_url) <= 2000),
  saml_idp_metadata_xml text,
  -- PEM, several while the IdP rotates its key
  saml_idp_certificates text[],
  saml_idp_entity_id text CHECK (length(saml_idp_entity_id) <= 1024),
  saml_idp_sso_url text CHECK (length(saml_idp_sso_url) <= 2000),
  saml_metadata_fetched_at timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((accounts = 'create') = (default_role IS NOT NULL)),
  CHECK (protocol <> 'oidc' OR (oidc_issuer IS NOT NULL AND oidc_client_id IS NOT NULL AND oidc_client_secret_enc IS NOT NULL
    AND saml_idp_certificates IS NULL AND saml_idp_metadata_url IS NULL AND saml_idp_metadata_xml IS NULL)),
  CHECK (protocol <> 'saml' OR (cardinality(saml_idp_certificates) > 0
    AND (saml_idp_metadata_url IS NULL) <> (saml_idp_metadata_xml IS NULL)
    AND oidc_issuer IS NULL AND oidc_client_secret_enc IS NULL))
);
CREATE INDEX sso_connections_workspace_idx ON sso_connections (workspace_id, created_at, id);

-- The verified domains a connection serves: a domain serves at most one connection (its primary
-- key); removing the domain or the connection removes the row.
CREATE TABLE sso_connection_domains (
  domain_id uuid PRIMARY KEY REFERENCES workspace_domains (id) ON DELETE CASCADE,
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE
);
CREATE INDEX sso_connection_domains_connection_idx ON sso_connection_domains (connection_id);

-- Who signed in through a connection: an identity is (connection, issuer, subject), never an
-- e-mail address alone.
CREATE TABLE sso_identities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  issuer text NOT NULL CHECK (length(issuer) <= 2000),
  subject text NOT NULL CHECK (length(subject) <= 1024),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz,
  UNIQUE (connection_id, issuer, subject)
);
CREATE INDEX sso_identities_user_idx ON sso_identities (user_id);
