-- A batch row of an address listed earlier in the same batch names that earlier row in a column of
-- its own (InvitationBatchRow.duplicateOf), so that no client reads it out of the row's message.
-- Rows written before this migration get it from the first row of the same address in their batch.
ALTER TABLE invitation_batch_rows ADD COLUMN duplicate_of integer;
UPDATE invitation_batch_rows d
   SET duplicate_of = (SELECT min(o.position) FROM invitation_batch_rows o
                        WHERE o.batch_id = d.batch_id AND o.email = d.email AND o.result <> 'duplicate')
 WHERE d.result = 'duplicate';
