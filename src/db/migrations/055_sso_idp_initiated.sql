-- Issue 53: a SAML connection may accept IdP-initiated sign-in (a tile in the provider's
-- dashboard). Off by default; when on, an unsolicited response is never believed: it starts a
-- fresh SP-initiated sign-in with the same provider (src/sso/sign-in.ts).
ALTER TABLE sso_connections ADD COLUMN saml_idp_initiated boolean NOT NULL DEFAULT false;
