-- A send lease on an invitation: rotating its token and sending the e-mail with that token are
-- one ordered step. The statement that rotates the token takes the lease (owner, until) only if
-- it is free or has run out; the owner clears it after the send. A concurrent invite of the same
-- address waits for it, so the newest e-mail always carries the working link. A lease left by a
-- process that died runs out by itself (bounded by the send deadline).
ALTER TABLE invitations ADD COLUMN send_owner uuid, ADD COLUMN send_until timestamptz;
