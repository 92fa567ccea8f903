-- An e-mail provider's signed delivery (Resend through Svix) is applied once: its id is
-- remembered, in the transaction that applies it, for longer than its signature can verify (the
-- timestamp is accepted 5 minutes either way of the server's clock), so a captured delivery
-- replayed within that window finds its id taken and changes nothing. Older ids are dropped as
-- new ones arrive (src/db/email-event-deliveries.ts).
CREATE TABLE email_event_deliveries (
  provider text NOT NULL,
  delivery_id text NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 100),
  received_at timestamptz NOT NULL,
  PRIMARY KEY (provider, delivery_id)
);
CREATE INDEX email_event_deliveries_received_idx ON email_event_deliveries (received_at);
