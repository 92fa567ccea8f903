-- Issue 54 (4): the workspace's look. What e-mails and pages before sign-in call the workspace
-- (display_name; NULL: its name), the accent colour of their links and buttons (NULL: the
-- service's own), the From name of its e-mails (NULL: "<display name> via <service>"), and its
-- logo: the bytes as uploaded (checked PNG, JPEG or WebP, at most 200 kB), served publicly under
-- their SHA-256 (src/workspaces/logo.ts). One row per workspace that set anything.
CREATE TABLE workspace_branding (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  display_name text CHECK (char_length(display_name) BETWEEN 1 AND 100),
  accent_color text CHECK (accent_color ~ '^#[0-9a-f]{6}$'),
  sender_name text CHECK (char_length(sender_name) BETWEEN 1 AND 100),
  logo bytea CHECK (octet_length(logo) <= 204800),
  logo_sha256 text CHECK (logo_sha256 ~ '^[0-9a-f]{64}$'),
  logo_media_type text CHECK (logo_media_type IN ('image/png', 'image/jpeg', 'image/webp')),
  updated_at timestamptz NOT NULL,
  CHECK ((logo IS NULL) = (logo_sha256 IS NULL) AND (logo IS NULL) = (logo_media_type IS NULL))
);
-- The public GET /branding/logos/{sha256}.{ext} finds the logo by its hash.
CREATE INDEX workspace_branding_logo_sha256 ON workspace_branding (logo_sha256) WHERE logo_sha256 IS NOT NULL;
