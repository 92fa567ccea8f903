-- Shareable invite links (POST /api/invite-links): anyone with the link may ask to join, proves
-- their address by a confirmation e-mail, then joins (or an invite request is made). Only the
-- SHA-256 of a code is kept; regenerating replaces it, so the old code finds no row at once.
-- Uses are counted by one guarded UPDATE (uses < max_uses AND not revoked AND not expired), so
-- concurrent confirmations cannot pass max_uses.
CREATE TABLE invite_links (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  code_hash text NOT NULL UNIQUE,
  role text NOT NULL CHECK (role = 'member'),
  max_uses integer CHECK (max_uses >= 1),
  uses integer NOT NULL DEFAULT 0 CHECK (uses >= 0 AND (max_uses IS NULL OR uses <= max_uses)),
  allowed_domains text[] NOT NULL DEFAULT '{}',
  requires_approval boolean NOT NULL DEFAULT false,
  expires_at timestamptz NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX invite_links_workspace_idx ON invite_links (workspace_id, created_at DESC, id DESC);

-- An address asked to join through a link: the confirmation e-mailed to it (hash only), bound to
-- the code it came through (a regenerated or revoked link refuses it). Rows per link in the last
-- hour are the link's join budget (INVITE_LINK_JOINS_PER_HOUR).
CREATE TABLE invite_link_joins (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  link_id uuid NOT NULL REFERENCES invite_links (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 254),
  name text CHECK (length(name) <= 200),
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX invite_link_joins_link_idx ON invite_link_joins (link_id, created_at);
