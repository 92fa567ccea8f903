-- A claim may record, before its request does something it cannot undo (an e-mail leaves), what
-- a retry needs to finish that same work rather than redo it (for an invitation: the link that
-- e-mail carries), sealed like the answers. A claim that failed after its checkpoint is kept
-- (not deleted) so the retry finds it. Before, a database that dropped after the e-mail had
-- left answered 503, and the retry sent a second e-mail with a new link: the first was dead.
ALTER TABLE idempotency_keys ADD COLUMN checkpoint text;
