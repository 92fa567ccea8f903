-- Member status (issue 41): a member is active or suspended (removed members stay as rows, as
-- before). 'disabled' was the name of a state nothing could set; it is 'suspended' now: reversible,
-- keeping the role. suspended_at says since when (null while active). The listing filtered by
-- status (GET /api/users?status=) walks the same (workspace, created_at, id) order as the others.
UPDATE users SET status = 'suspended' WHERE status = 'disabled';
ALTER TABLE users DROP CONSTRAINT users_status_check;
ALTER TABLE users ADD CONSTRAINT users_status_check CHECK (status IN ('active', 'suspended', 'removed'));
ALTER TABLE users ADD COLUMN suspended_at timestamptz;
UPDATE users SET suspended_at = updated_at WHERE status = 'suspended';
ALTER TABLE users ADD CONSTRAINT users_suspended_at_check CHECK ((status = 'suspended') = (suspended_at IS NOT NULL));
