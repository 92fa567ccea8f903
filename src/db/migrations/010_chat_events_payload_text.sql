-- A chat event whose strings jsonb cannot hold (U+0000, half a surrogate pair) is recorded with
-- those characters replaced in `payload` (for queries) and exactly, as JSON text, in
-- `payload_text`, which the worker reads when it is set. Before, such an event answered 500 and
-- was lost, as were Slack's retries of it.
ALTER TABLE chat_events ADD COLUMN payload_text text;
