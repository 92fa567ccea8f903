-- Issue 53: the admins of a workspace are told when the last of a SAML connection's pinned
-- signing certificates to expire nears its end (30 days, 7 days, expired). One row per
-- certificate and stage told, so the hourly sweep tells each once, across instances and restarts
-- (src/sso/certificate-expiry.ts). A certificate rotated away leaves its rows to its connection.
CREATE TABLE sso_certificate_notices (
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  fingerprint text NOT NULL CHECK (length(fingerprint) <= 200),
  -- Days before expiry the stage begins: 30, 7 or 0 (expired).
  stage smallint NOT NULL CHECK (stage IN (30, 7, 0)),
  noticed_at timestamptz NOT NULL,
  PRIMARY KEY (connection_id, fingerprint, stage)
);
