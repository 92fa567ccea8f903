import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'

// SAML assertion IDs accepted (the replay port of src/sso/saml.ts): one row per IdP and
// assertion, kept until it could no longer be accepted. The primary key makes the check atomic
// across instances: of two presentations, one inserts.

/** Records the assertion; false when it was recorded before (a replay). */
export async function rememberSsoAssertion (
  q: Queryable, a: { idpEntityId: string, assertionId: string, keepUntil: Date, now: Date }
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO sso_assertions (idp_entity_id, assertion_id, keep_until, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (idp_entity_id, assertion_id) DO NOTHING`,
    [a.idpEntityId, a.assertionId, a.keepUntil, a.now])
  return r.rowCount === 1
}

/** Housekeeping: up to `limit` assertions past their keep time. */
export async function deleteExpiredSsoAssertions (q: Queryable, before: Date, limit: number): Promise<number> {
  return await deleteBatch(
    q, { table: 'sso_assertions', key: 'idp_entity_id, assertion_id', where: 'keep_until < $1' }, before, limit
  )
}
