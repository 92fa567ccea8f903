import '../common.js'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'

// What the Streams panel's buttons do (audit-streams.tsx): a chunk of its own, fetched at the
// first of them, not with the screen. It imports console/common.ts as every screen does, for
// bundling only: every entry then reaches the shared modules it uses, and esbuild does not split
// their chunk (on every first load) for it.

const { t } = screenWordsOf<typeof own>('activity')

/**
 * Send `s` a test record, pause or resume it, or delete it, and say what happened; the problem
 * that stopped it, else null. `answerOf`: what a receiver answered, in words.
 */
export async function act (
  what: 'test' | 'toggle' | 'delete', s: Schemas['AuditStream'], answerOf: (code: number | null, error: string | null) => string
): Promise<Problem | null> {
  const path = { params: { path: { streamId: s.id } } }
  const name = s.name
  if (what === 'test') {
    const r = await call(api.POST('/api/audit-streams/{streamId}/test', path))
    if (r.ok) announce(t(r.data.delivered ? 'accepted' : 'notAccepted', { name, answer: answerOf(r.data.statusCode, r.data.error) }))
    return r.ok ? null : r.problem
  }
  const paused = s.status === 'paused'
  const r = what === 'delete'
    ? await call(api.DELETE('/api/audit-streams/{streamId}', path))
    : await call(api.POST(paused ? '/api/audit-streams/{streamId}/resume' : '/api/audit-streams/{streamId}/pause', path))
  if (r.ok) announce(t(what === 'delete' ? 'deleted' : paused ? 'resumes' : 'pausedNote', { name }))
  return r.ok ? null : r.problem
}

/** Add a stream, and say so; its signing secret (null: none), else the problem that stopped it. */
export async function add (body: Schemas['CreateAuditStreamRequest']): Promise<{ secret: string | null } | Problem> {
  const r = await call(api.POST('/api/audit-streams', { body }))
  if (!r.ok) return r.problem
  announce(t('added', { name: r.data.name, secret: r.data.secret !== null ? 'yes' : 'no' }))
  return { secret: r.data.secret }
}
