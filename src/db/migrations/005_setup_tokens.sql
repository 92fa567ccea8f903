-- One-time setup links: while no workspace exists, each start of the service logs a link whose
-- token is kept here only as its SHA-256. Completing the setup deletes every row in the
-- transaction that creates the first workspace; a start that finds a workspace deletes leftovers.
CREATE TABLE setup_tokens (
  token_hash text PRIMARY KEY,
  created_at timestamptz NOT NULL
);
