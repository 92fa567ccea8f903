-- Audit and event ids were one bigserial across every workspace: the gaps between a workspace's own
-- ids told it how active all the others were. They become UUIDv7 (time in ms, then random bits):
-- they still sort by time, so the audit trail and the events feed page in order, and reveal
-- nothing else. The service makes them (src/lib/uuid.ts, monotonic per process); uuid_v7_at()
-- is the default for rows written by SQL alone, and numbers the existing rows: their time is
-- their created_at, and within one ms of one workspace their old order is kept in rand_a (the
-- counter of RFC 9562 §6.2 method 1), so no old sequence number survives.
CREATE FUNCTION uuid_v7_at(ts timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7' || substr(r, 1, 3) ||
          to_hex(8 + floor(random() * 4)::int) || substr(r, 18, 15))::uuid
    FROM (SELECT replace(gen_random_uuid()::text, '-', '') AS r) AS s
$$;

ALTER TABLE audit_events ADD COLUMN uid uuid;
UPDATE audit_events a
   SET uid = (lpad(to_hex(floor(extract(epoch FROM a.created_at) * 1000)::bigint), 12, '0') || '7' ||
              lpad(to_hex((o.n - 1) % 4096), 3, '0') || to_hex(8 + floor(random() * 4)::int) ||
              substr(replace(gen_random_uuid()::text, '-', ''), 18, 15))::uuid
  FROM (SELECT id, row_number() OVER (PARTITION BY workspace_id, date_trunc('milliseconds', created_at) ORDER BY id) AS n
          FROM audit_events) AS o
 WHERE o.id = a.id;

ALTER TABLE webhook_deliveries ADD COLUMN event_uid uuid;
UPDATE webhook_deliveries d SET event_uid = a.uid FROM audit_events a WHERE a.id = d.event_id;
-- Drops the foreign key and UNIQUE (endpoint_id, event_id) with it.
ALTER TABLE webhook_deliveries DROP COLUMN event_id;
-- Drops the primary key and every index on the old id with it.
ALTER TABLE audit_events DROP COLUMN id;
ALTER TABLE audit_events RENAME COLUMN uid TO id;
ALTER TABLE audit_events ALTER COLUMN id SET NOT NULL, ALTER COLUMN id SET DEFAULT uuid_v7_at(clock_timestamp());
ALTER TABLE audit_events ADD PRIMARY KEY (id);
CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, id DESC);
CREATE INDEX audit_events_target_idx ON audit_events (workspace_id, target_type, target_id, id DESC);
CREATE INDEX audit_events_feed_idx ON audit_events (workspace_id, id) WHERE event_type IS NOT NULL;
CREATE INDEX audit_events_feed_time_idx ON audit_events (workspace_id, created_at, id) WHERE event_type IS NOT NULL;

ALTER TABLE webhook_deliveries RENAME COLUMN event_uid TO event_id;
ALTER TABLE webhook_deliveries ALTER COLUMN event_id SET NOT NULL;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey
  FOREIGN KEY (event_id) REFERENCES audit_events (id) ON DELETE CASCADE;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_event_id_key UNIQUE (endpoint_id, event_id);
