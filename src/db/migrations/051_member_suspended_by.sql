-- Issue 56 (2): who suspended a member. A company directory manages the members it provisioned or
-- linked (directory_linked_at): an admin may always suspend one (a security team cannot wait for a
-- sync), but may not reactivate someone their directory deactivated — the directory and the
-- service would disagree with no word to anyone. 'admin': an admin (session or key); 'directory':
-- the directory (SCIM active = false). Members suspended before this migration: NULL, unknown, so
-- an admin may reactivate them, as before.
ALTER TABLE users ADD COLUMN suspended_by text CHECK (suspended_by IN ('admin', 'directory'));
ALTER TABLE users ADD CONSTRAINT users_suspended_by_status_check CHECK (suspended_by IS NULL OR status = 'suspended');
