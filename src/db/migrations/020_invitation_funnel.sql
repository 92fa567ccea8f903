-- Issue 29: the invitation funnel of a workspace over a period (GET /api/invitations/funnel):
-- of the invitations sent in it, how many were viewed, accepted, expired unseen, bounced. One
-- statement reads only this index (an index-only scan of the period's range: every column it
-- counts by is here), never the rows themselves. Built inside the migration's transaction:
-- writes to invitations wait for it (about 2 s per million rows).
CREATE INDEX invitations_funnel_idx ON invitations (workspace_id, created_at)
  INCLUDE (status, expires_at, viewed_at, delivery_status) WHERE last_sent_at IS NOT NULL;
