-- Many invitations in one request (POST /api/invitations/batch). A batch is written with every
-- row's result in the request's transaction; the e-mails of its invited rows go out later, through
-- the job engine, a chunk of rows per job. Each row's `delivery` is the batch's view of its
-- e-mail ('queued' until sent, failed for good, or cancelled because the invitation moved on);
-- the invitation itself keeps its own delivery state (invitations.delivery_status, the send lease).
-- A job that died (kill -9) is run again: rows still 'queued' are sent, the others are not.
CREATE TABLE invitation_batches (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- who asked, as the delivery jobs need it for the e-mail and the audit trail
  actor jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('processing', 'completed')),
  total integer NOT NULL,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX invitation_batches_workspace_idx ON invitation_batches (workspace_id, created_at DESC);

CREATE TABLE invitation_batch_rows (
  batch_id uuid NOT NULL REFERENCES invitation_batches (id) ON DELETE CASCADE,
  position integer NOT NULL,
  -- as given (an invalid row keeps what was sent, cut to 320 characters)
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  result text NOT NULL CHECK (result IN ('invited', 'resent', 'already_member', 'invalid', 'duplicate', 'over_budget')),
  invitation_id uuid REFERENCES invitations (id) ON DELETE SET NULL,
  delivery text CHECK (delivery IN ('queued', 'sent', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  retry_after_seconds integer,
  message text,
  PRIMARY KEY (batch_id, position)
);
CREATE INDEX invitation_batch_rows_queued_idx ON invitation_batch_rows (batch_id, position) WHERE delivery = 'queued';
