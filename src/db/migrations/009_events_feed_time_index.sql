-- The events feed starts each read at the first event within its 30-day horizon, found in this
-- index with one probe. Before, a read without a cursor (or with one older than the horizon)
-- walked the workspace's events from its first one and dropped its whole history before the
-- horizon (a year of 1M events: 0.4 s for one page).
CREATE INDEX audit_events_feed_time_idx ON audit_events (workspace_id, created_at, id) WHERE event_type IS NOT NULL;
