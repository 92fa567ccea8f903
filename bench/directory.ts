import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { availableParallelism, loadavg } from 'node:os'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'

// `npm run bench -- --directory`: a company directory's load on the embedded database (PGlite in a
// data directory, as `npm start` with nothing configured). Measured in process through inject, so
// the figures are the server's own time per request (no network, no load generator):
//  - first import: `people` people as Okta imports them, one by one: a lookup by
//    `userName eq "…"`, then a POST of the User (target: at least 50 people/s; importPerson, which
//    `--scim`, bench/scim-import.ts, runs over HTTP with four clients at once on PostgreSQL);
//  - lookups: with `members` members in the workspace, `lookups` filtered lookups
//    (`userName eq`, `externalId eq`, `emails.value eq`, in turn) — median and p99 (target: p99
//    under 20 ms), and the p99 of each kind.
// Beside wall-clock times, the CPU time this process spent (the server's work and the in-process
// client's, which is small): on a machine other work loads, wall time says how busy the machine
// was, CPU time what one request costs (the rate one free core would reach: 1 s / CPU per person).
// The directory's key draws on its own budget at its default (API_KEY_SCIM_RATE_LIMIT_PER_MINUTE):
// an import refused 429 here would be refused so in production. The load average is printed
// before and after: on a shared machine the figures mean little without it.

const write = (s: string): void => { process.stdout.write(s) }
const SECRET = 'bench-directory-secret-0123456789abcdef'
const SCIM = 'application/scim+json'

/** CPU milliseconds (user and system) of a process.cpuUsage() difference. */
export const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000

export const loadOf = (): string => loadavg().map(l => l.toFixed(2)).join(' ')

export function quantile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN
}

/** A workspace's directory key (scope `scim`, named as Okta's would be), made by its admin. */
export async function directoryKey (app: FastifyInstance, workspaceId: string): Promise<string> {
  const now = new Date()
  const email = `admin@${workspaceId}.bench.test`
  const admin = await insertUser(app.db, { workspaceId, email, name: null, role: 'admin', now })
  const actor = {
    kind: 'session' as const, userId: admin.id, workspaceId, email, name: null, role: 'admin' as const
  }
  const key = await app.services.apiKeys.create(
    { ...actor, sessionId: null, apiKeyId: null, requestId: null }, { name: 'Okta', scopes: ['scim'] }
  )
  return key.secret
}

/** One SCIM request of a directory client with its key: the status and body of the answer. */
export type ScimSend =
  (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<{ status: number, body: string }>

/**
 * One person of a first import as Okta makes it: a lookup by `userName eq "…"` (none found), then
 * a POST of the User to the canonical path (201). `userName` and `externalId` are new to the workspace.
 */
export async function importPerson (send: ScimSend, userName: string, externalId: string): Promise<void> {
  const lookup = `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`
  const found = await send('GET', lookup)
  if (found.status !== 200 || (JSON.parse(found.body) as { totalResults: number }).totalResults !== 0) {
    throw new Error(`lookup ${userName}: ${found.status} ${found.body.slice(0, 200)}`)
  }
  const created = await send('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    externalId,
    name: { givenName: 'Person', familyName: externalId },
    emails: [{ primary: true, type: 'work', value: userName }],
    active: true
  })
  if (created.status !== 201) throw new Error(`create ${userName}: ${created.status} ${created.body.slice(0, 200)}`)
}

export async function runDirectory (o: { people: number, members: number, lookups: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-directory-'))
  const config = loadConfig(
    { LOG_LEVEL: 'silent', SESSION_SECRET: SECRET, DATA_DIR: dir },
    { root: process.cwd() }
  )
  const app = await buildApp({ config, logger: false })
  await app.ready()
  write(`load average ${loadOf()} (${availableParallelism()} CPUs) before\n`)
  try {
    const scim = async (key: string, method: 'GET' | 'POST', url: string, body?: unknown) => await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': SCIM } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {})
    })
    // 1. The first import, one person at a time: lookup, then create.
    const ws = await insertWorkspace(app.db, { name: 'Import', now: new Date() })
    const key = await directoryKey(app, ws.id)
    const send: ScimSend = async (method, url, body) => {
      const res = await scim(key, method, url, body)
      return { status: res.statusCode, body: res.body }
    }
    const started = performance.now()
    const cpuStarted = process.cpuUsage()
    for (let i = 0; i < o.people; i++) await importPerson(send, `person${i}@import.bench.test`, `00u${i}`)
    const seconds = (performance.now() - started) / 1000
    const rate = o.people / seconds
    const cpuPerPerson = cpuMs(process.cpuUsage(cpuStarted)) / o.people
    write(`first import: ${o.people} people (lookup + create each) in ${seconds.toFixed(1)} s: ` +
      `${rate.toFixed(0)} people/s (target ≥ 50) ${rate >= 50 ? 'ok' : 'MISSED'}; ` +
      `CPU ${cpuPerPerson.toFixed(2)} ms a person (${(1000 / cpuPerPerson).toFixed(0)} people/s on a free core)\n`)

    // 2. Lookups among `members` members (set-based seed, as the directory would have made them).
    const big = await insertWorkspace(app.db, { name: 'Lookups', now: new Date() })
    const bigKey = await directoryKey(app, big.id)
    await app.db.query(
      `INSERT INTO users (workspace_id, email, name, role, directory_user_name, directory_external_id,
                          directory_linked_at, created_at, updated_at)
       SELECT $1, 'm' || k || '@lookup.bench.test', 'Member ' || k, 'member', 'M' || k || '@lookup.bench.test',
              'ext-' || k, now(), now() - k * interval '1 minute', now() - k * interval '1 minute'
         FROM generate_series(1, $2::int) AS k`, [big.id, o.members])
    await app.db.exec('ANALYZE users')
    const filters = [
      (k: number) => `userName eq "m${k}@LOOKUP.bench.test"`,
      (k: number) => `externalId eq "ext-${k}"`,
      (k: number) => `emails.value eq "m${k}@lookup.bench.test"`
    ]
    const ms: number[] = []
    const cpuMsEach: number[] = []
    const byKind: number[][] = filters.map(() => [])
    for (let i = 0; i < o.lookups; i++) {
      const k = 1 + (i * 7919) % o.members
      const filter = (filters[i % filters.length] as (k: number) => string)(k)
      const t = performance.now()
      const cpu = process.cpuUsage()
      const res = await scim(bigKey, 'GET', `/api/scim/v2/Users?filter=${encodeURIComponent(filter)}`)
      ms.push(performance.now() - t)
      cpuMsEach.push(cpuMs(process.cpuUsage(cpu)))
      byKind[i % filters.length]?.push(ms[ms.length - 1] as number)
      if (res.statusCode !== 200 || (res.json() as { totalResults: number }).totalResults !== 1) {
        throw new Error(`lookup ${filter}: ${res.statusCode} ${res.body.slice(0, 200)}`)
      }
    }
    ms.sort((a, b) => a - b)
    const p99 = quantile(ms, 0.99)
    write(`lookups among ${o.members} members: ${o.lookups} filtered lookups, ` +
      `median ${quantile(ms, 0.5).toFixed(2)} ms, ` +
      `p99 ${p99.toFixed(2)} ms (target < 20 ms) ${p99 < 20 ? 'ok' : 'MISSED'}\n`)
    cpuMsEach.sort((a, b) => a - b)
    write(`  CPU time a lookup: median ${quantile(cpuMsEach, 0.5).toFixed(2)} ms, ` +
      `p99 ${quantile(cpuMsEach, 0.99).toFixed(2)} ms\n`)
    const kinds = ['userName', 'externalId', 'emails.value']
    write(`  p99 by filter: ${byKind.map((k, i) => {
      k.sort((a, b) => a - b)
      return `${kinds[i] ?? ''} ${quantile(k, 0.99).toFixed(2)} ms`
    }).join(', ')}\n`)
    write(`load average ${loadOf()} after\n`)
  } finally {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
