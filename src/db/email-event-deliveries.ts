import type { Queryable } from './client.js'

// The ids of e-mail providers' signed deliveries applied lately (migration 037): a replay of one
// within its signature window finds its id here.

/**
 * Remember a delivery's id, in the transaction that applies it; false when it was applied
 * already (a replay). Ids received before `forgetBefore` are dropped first: past the signature
 * window a replay is refused by its timestamp anyway.
 */
export async function rememberEmailEventDelivery (
  q: Queryable, d: { provider: string, deliveryId: string, now: Date, forgetBefore: Date }
): Promise<boolean> {
  await q.query('DELETE FROM email_event_deliveries WHERE received_at < $1', [d.forgetBefore])
  const r = await q.query(
    `INSERT INTO email_event_deliveries (provider, delivery_id, received_at) VALUES ($1, $2, $3)
     ON CONFLICT (provider, delivery_id) DO NOTHING`, [d.provider, d.deliveryId, d.now])
  return r.rowCount === 1
}
