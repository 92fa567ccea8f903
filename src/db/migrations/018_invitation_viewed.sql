-- Issue 29: the states an invitation shows are ones it is really in.
-- viewed_at: the first human open of the signup page (its preview request, never the GET a link
-- scanner makes); later opens record nothing.
ALTER TABLE invitations ADD COLUMN viewed_at timestamptz;
-- 'not_sent': nobody e-mailed this invitation, and nobody will: the setup page's first admin
-- (accepted in the same transaction) and create-admin's link printed without a mailer. Before,
-- these said 'pending' forever. 'bounced' belongs to the bounce intake (issue 29, item 3); it is
-- listed here too so that the order in which the two migrations land does not matter.
ALTER TABLE invitations DROP CONSTRAINT IF EXISTS invitations_delivery_status_check;
ALTER TABLE invitations ADD CONSTRAINT invitations_delivery_status_check
  CHECK (delivery_status IN ('pending', 'sent', 'failed', 'identity_provider', 'not_sent', 'bounced'));
-- The rows that said 'pending' without any delivery attempt and will never have one: accepted,
-- revoked or expired without an attempt, and the first admins' invitations (nobody invited them).
UPDATE invitations SET delivery_status = 'not_sent'
 WHERE delivery_status = 'pending' AND delivery_attempts = 0
   AND (status <> 'pending' OR (invited_by IS NULL AND invited_by_api_key IS NULL));
