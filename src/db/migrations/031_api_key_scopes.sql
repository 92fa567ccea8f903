-- API keys on the whole contract: each key holds the scopes it may use (the contract's
-- ApiKeyScope catalogue) and may expire. Keys made before scopes existed could call the MCP
-- endpoint and GET /api/workspace: they get every MCP tool's scopes (members:admin included, as
-- invite_user could invite an admin) and workspace:read, so no key in use stops working.
ALTER TABLE api_keys ADD COLUMN scopes text[];
UPDATE api_keys SET scopes = ARRAY[
  'workspace:read', 'members:read', 'members:admin', 'invitations:read', 'invitations:write',
  'requests:read', 'requests:write', 'links:read', 'links:write', 'domains:read', 'domains:write'
];
ALTER TABLE api_keys ALTER COLUMN scopes SET NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (cardinality(scopes) > 0);
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
