-- Issue 29: one reminder per pending invitation, N days before it expires (a workspace setting).
-- reminder_days: 1 to 7, NULL when reminders are off; every workspace starts at 2.
ALTER TABLE workspaces ADD COLUMN reminder_days integer DEFAULT 2 CHECK (reminder_days BETWEEN 1 AND 7);
-- reminded_at: when the reminder was claimed (and its e-mail queued), once. link_sealed: the token
-- the invitation e-mail carried, AES-256-GCM with a key from the configuration (never readable in
-- a dump), so that the reminder carries the same link; cleared when the token rotates or stops
-- working. Invitations sent before this migration have none and get no reminder.
ALTER TABLE invitations ADD COLUMN reminded_at timestamptz, ADD COLUMN link_sealed text;
-- The sweep reads the pending, unreminded invitations expiring within the next 7 days.
CREATE INDEX invitations_reminder_due_idx ON invitations (expires_at)
  WHERE status = 'pending' AND reminded_at IS NULL AND link_sealed IS NOT NULL;
