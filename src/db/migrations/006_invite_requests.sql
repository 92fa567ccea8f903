-- Who may invite, per workspace (admins | request | members), and invite requests: a member asks,
-- an admin approves (which sends the invitation) or denies. One pending request per workspace and
-- e-mail; deciding is one guarded UPDATE (WHERE status = 'pending'), so two admins clicking at
-- once make one decision and one invitation. 'expired' is written lazily, like invitations'.
ALTER TABLE workspaces ADD COLUMN invite_policy text NOT NULL DEFAULT 'admins'
  CHECK (invite_policy IN ('admins', 'request', 'members'));

CREATE TABLE invite_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 254),
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  requested_by uuid REFERENCES users (id) ON DELETE SET NULL,
  decided_by uuid REFERENCES users (id) ON DELETE SET NULL,
  decided_at timestamptz,
  reason text CHECK (length(reason) <= 500),
  -- the admins' chat messages about this request ([{channel, ts}]), updated once it is decided
  chat_messages jsonb NOT NULL DEFAULT '[]',
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX invite_requests_one_pending ON invite_requests (workspace_id, email) WHERE status = 'pending';
CREATE INDEX invite_requests_workspace_idx ON invite_requests (workspace_id, created_at DESC, id DESC);
