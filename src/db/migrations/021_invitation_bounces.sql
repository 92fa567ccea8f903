-- Bounces: a permanent delivery failure reported after the relay took the e-mail (a DSN sent to
-- the invitation's signed return path, or an e-mail provider's signed webhook) marks the
-- invitation `bounced` (the delivery_status value is allowed by migration 018), with when and
-- why. A re-send clears both (its e-mail has not bounced).
ALTER TABLE invitations ADD COLUMN bounced_at timestamptz, ADD COLUMN bounce_reason text;
-- A provider's bounce names the recipient's address (when the e-mail carried no invitation tag):
-- the pending invitations to that address are found through this index, not a scan.
CREATE INDEX invitations_pending_email_idx ON invitations (email) WHERE status = 'pending';
