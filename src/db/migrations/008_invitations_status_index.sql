-- The invitation list filtered by status (?status=pending|accepted|revoked) reads that status's
-- rows of the workspace in page order. With the workspace's index alone, such a page skipped every
-- row of another status: the last page of ?status=pending read all the workspace's history (with
-- 1M invitations, 980k rows and 0.5 s). 'expired' (stored, or pending past its expiry) stays on the
-- workspace's index: it is two statuses, and most of an old workspace's rows. Built in the
-- migration's transaction: writes to invitations wait for it (about 2 s per million rows).
CREATE INDEX invitations_workspace_status_idx ON invitations (workspace_id, status, created_at DESC, id DESC);
