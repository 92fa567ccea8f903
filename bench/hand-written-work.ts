import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { contractPath, projectRoot } from '../src/paths.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { apiKeyScopes } from '../src/generated/api-key-scopes.js'
import { seedWorkspaceInvitations } from './seed.js'

// What every hand-written baseline shares, whatever its framework (bench/hand-written.ts on
// Fastify, bench/hand-written-hono.ts, bench/hand-written-express.ts): its command line, the
// service's own domain services (sessions, invitations, API keys: the same SQL), the contract's
// schemas as one would paste them by hand, the health check's cached ping, the bench admin it
// seeds, and the way bench/servers.ts starts and stops it. Written once, so the baselines differ
// by their framework alone.
//
//   (forked by bench/servers.ts) tsx bench/hand-written[-hono|-express].ts --port N --invitations N
//     [--no-security-headers]
// Environment: the service's (DATA_DIR / DATABASE_URL, SMTP_URL, SESSION_SECRET, LOG_LEVEL …).
// Sends {type:'ready', cookie, apiKey} once it listens, with an admin's session cookie and an
// API key of its own workspace (seeded with --invitations invitations for the list page).

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    invitations: { type: 'string', default: '0' },
    // `--costs`: what the security headers cost, measured on the Fastify baseline with and without them.
    'no-security-headers': { type: 'boolean', default: false }
  },
  strict: true
})
/** Whether this baseline sets the service's security headers (`--costs` measures them by their absence). */
export const withSecurityHeaders = !values['no-security-headers']

export const config = loadConfig(process.env, { root: projectRoot })
// The service's app built from the same environment, never listening: its services, database and
// session signer are what the baselines call, so the SQL (and a change of it) is the service's own.
export const base = await buildApp({ config, logger: false })
await base.ready()
export const { services, db } = base

// The contract's schemas with every local $ref inlined: what one would paste into a route by hand.
const contract = parseYaml(readFileSync(contractPath, 'utf8')) as Record<string, unknown>
function inline (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inline)
  if (node === null || typeof node !== 'object') return node
  const ref = (node as { $ref?: string }).$ref
  if (ref !== undefined) {
    const target = ref.slice(2).split('/').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], contract)
    return inline(target)
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]))
}
export const schemaOf = (name: string) => inline({ $ref: `#/components/schemas/${name}` }) as Record<string, unknown>
const parameterSchema = (name: string): unknown =>
  (inline({ $ref: `#/components/parameters/${name}` }) as { schema: unknown }).schema

/** GET /api/invitations' query string as one object schema (Fastify's `querystring`). */
export const listQuerySchema = {
  type: 'object',
  properties: {
    status: schemaOf('InvitationStatus'), limit: parameterSchema('Limit'), cursor: parameterSchema('Cursor')
  },
  additionalProperties: false
}
/** The query the list schema let through (its default limit filled in), as the invitation service takes it. */
export function listQuery (q: { status?: 'pending', limit?: number, cursor?: string }) {
  return {
    limit: q.limit ?? 50,
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
  }
}

// Health: a database ping shared by concurrent checks and reused for HEALTH_CACHE_MS, as the service does.
let okUntil = 0
let latencyMs = 0
export async function health () {
  if (performance.now() >= okUntil) {
    const t0 = performance.now()
    await db.ping()
    latencyMs = Math.round((performance.now() - t0) * 100) / 100
    okUntil = performance.now() + config.healthCacheMs
  }
  return { status: 'ok', version: config.version, checks: { database: { status: 'ok', kind: db.kind, latencyMs } } }
}

/** MCP's door only: a request the API key's rate limit lets through is answered 503 (no MCP server here). */
export const MCP_PATH = '/api/mcp'
/** The `Authorization: Bearer` credential of a request, or null (the service's own pattern). */
export function bearer (authorization: string | undefined): string | null {
  const m = /^Bearer ([\x21-\x7e]{1,200})$/i.exec(authorization ?? '')
  return m === null ? null : m[1] as string
}

/**
 * An admin with a session and an API key, in a workspace of its own holding `--invitations`
 * invitations; then `listen(port)` (the framework's own), and the ready message to bench/servers.ts.
 * SIGTERM or a `stop` message closes the server (`listen`'s answer), then the service's app.
 */
export async function serve (listen: (port: number) => Promise<() => Promise<void>>): Promise<void> {
  const now = new Date()
  const workspace = await insertWorkspace(db, { name: 'Hand-written bench', now })
  const user = await insertUser(db, {
    workspaceId: workspace.id,
    email: `hand-${randomBytes(4).toString('hex')}@bench.test`,
    name: 'Hand',
    role: 'admin',
    now
  })
  const { token } = await services.sessions.start(db, user.id, 'signup')
  const principal = await services.sessions.authenticate(token)
  if (principal === null) throw new Error('hand-written: the session does not authenticate')
  const key = await services.apiKeys.create(principal, { name: 'bench', scopes: apiKeyScopes.map(s => s.scope) })
  await seedWorkspaceInvitations(db, workspace.id, Number(values.invitations))

  const closeServer = await listen(Number(values.port))
  const close = async (): Promise<void> => { await closeServer(); await base.close(); process.exit(0) }
  const closeOnce = (): void => {
    close().catch((err: Error) => { process.stderr.write(`${err.message}\n`); process.exit(1) })
  }
  process.on('SIGTERM', closeOnce)
  process.on('message', (m: { type: string }) => { if (m.type === 'stop') closeOnce() })
  process.send?.({ type: 'ready', cookie: `${SESSION_COOKIE}=${token}`, apiKey: key.secret })
}
