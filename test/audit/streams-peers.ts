import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { TestApp } from '../helpers/build.js'
import type { AuditEntry } from '../../src/db/audit-events.js'
import { systemActor } from '../../src/audit/actor.js'

// The receivers an audit stream delivers to, on loopback: a Splunk HTTP Event Collector, a
// Datadog logs intake and a plain HTTPS (here http) endpoint, each checking its credential and
// parsing its own format back into CloudEvents. A receiver can fail (503), hold a request
// unanswered, or go down altogether (its port closed: connections refused) and come back on
// the same port.

export type ReceiverKind = 'splunk' | 'datadog' | 'https'

interface ReceivedEvent {
  id: string, type: string, time: string, data: { id: string, action: string }, [k: string]: unknown
}

export interface Receiver {
  /** The URL a stream is given (the kind's path). */
  url: string
  /** Every request received, in order, with the envelopes it carried (none when refused). */
  requests: Array<{ headers: IncomingHttpHeaders, body: string, events: ReceivedEvent[], status: number }>
  /** What a request gets: accepted, 503, or held without an answer. */
  mode: 'ok' | 'fail' | 'hold'
  /** Answers every held request with `status` (0: cuts its connection instead) and stops holding. */
  release(status: number): void
  /** Closes the port (connections refused from now on). */
  down(): Promise<void>
  /** Opens it again, on the same port. */
  up(): Promise<void>
  /** Every envelope accepted (2xx), in the order received. */
  accepted(): ReceivedEvent[]
}

const PATHS: Record<ReceiverKind, string> = {
  splunk: '/services/collector/event', datadog: '/api/v2/logs', https: '/audit'
}

function parse (kind: ReceiverKind, body: string): ReceivedEvent[] {
  switch (kind) {
    case 'splunk':
      // HEC takes concatenated JSON objects; ours are one a line.
      return body.split('\n').filter(l => l !== '').map(l => (JSON.parse(l) as { event: ReceivedEvent }).event)
    case 'datadog':
      return (JSON.parse(body) as Array<{ message: string }>).map(l => JSON.parse(l.message) as ReceivedEvent)
    case 'https':
      return JSON.parse(body) as ReceivedEvent[]
  }
}

function authorised (kind: ReceiverKind, headers: IncomingHttpHeaders, token: string): boolean {
  if (kind === 'splunk') return headers.authorization === `Splunk ${token}`
  if (kind === 'datadog') return headers['dd-api-key'] === token
  return typeof headers['webhook-signature'] === 'string'
}

export async function startReceiver (
  t: { teardown(fn: () => unknown): void }, kind: ReceiverKind, token: string
): Promise<Receiver> {
  const sockets = new Set<Socket>()
  const held: Array<{ res: ServerResponse, index: number }> = []
  let server: Server | null = null
  let port = 0
  const r: Receiver = {
    url: '',
    requests: [],
    mode: 'ok',
    release (status) {
      r.mode = 'ok'
      for (const { res, index } of held.splice(0)) {
        if (status === 0) { res.destroy(); continue }
        const request = r.requests[index]
        if (request !== undefined) request.status = status
        res.writeHead(status).end('{}')
      }
    },
    async down () {
      const s = server
      server = null
      if (s === null) return
      for (const { res } of held.splice(0)) res.destroy()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>(resolve => { s.close(() => { resolve() }) })
    },
    async up () {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = []
        req.on('data', (c: Buffer) => chunks.push(c))
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          const ok = req.url === PATHS[kind] && authorised(kind, req.headers, token)
          const status = !ok ? 401 : r.mode === 'fail' ? 503 : kind === 'datadog' ? 202 : 200
          r.requests.push({ headers: req.headers, body, events: ok ? parse(kind, body) : [], status: r.mode === 'hold' ? 0 : status })
          if (r.mode === 'hold' && ok) { held.push({ res, index: r.requests.length - 1 }); return }
          res.writeHead(status, { 'content-type': 'application/json' })
          res.end(kind === 'splunk' ? '{"text":"Success","code":0}' : '{}')
        })
      })
      s.on('connection', socket => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
      await new Promise<void>(resolve => s.listen(port, '127.0.0.1', () => { resolve() }))
      port = (s.address() as { port: number }).port
      r.url = `http://127.0.0.1:${port}${PATHS[kind]}`
      server = s
    },
    accepted () {
      return r.requests.filter(q => q.status >= 200 && q.status < 300).flatMap(q => q.events)
    }
  }
  await r.up()
  t.teardown(async () => { await r.down() })
  return r
}

/** `n` audit records in the workspace, recorded as the service records them (one transaction each). */
export async function recordActions (h: TestApp, workspaceId: string, n: number, from = 0): Promise<void> {
  const actions: Array<AuditEntry['action']> = ['session.login', 'member.joined', 'workspace.settings_changed']
  for (let i = from; i < from + n; i++) {
    await h.db.transaction(async tx => {
      await h.app.services.ports.events.record(tx, {
        workspaceId,
        action: actions[i % actions.length] as AuditEntry['action'],
        actor: systemActor('stream test'),
        target: null,
        payload: { n: i },
        now: h.clock.now()
      })
    })
  }
}

/** The ids of the workspace's records after a stream's starting place, in chain order. */
export async function recordIdsAfter (h: Pick<TestApp, 'db'>, workspaceId: string, afterSeq: number): Promise<string[]> {
  const r = await h.db.query<{ id: string }>(
    'SELECT id::text AS id FROM audit_events WHERE workspace_id = $1 AND chain_seq > $2 ORDER BY chain_seq',
    [workspaceId, afterSeq])
  return r.rows.map(row => row.id)
}

/** Where a stream started: the chain place before its first record. */
export async function startOf (h: Pick<TestApp, 'db'>, streamId: string): Promise<number> {
  const r = await h.db.query<{ seq: number }>(
    `SELECT coalesce(max(a.chain_seq), 1)::int - 1 AS seq FROM audit_events a
      WHERE a.action = 'audit_stream.created' AND a.target_id = $1`, [streamId])
  return r.rows[0]?.seq ?? 0
}
