-- The members list says who invited each member and through which door: the invitation each one
-- accepted, found by the member's id (GET /api/users reads it for a page of members at once).
CREATE INDEX invitations_accepted_user_idx ON invitations (accepted_user_id) WHERE accepted_user_id IS NOT NULL;
