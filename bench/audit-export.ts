import { execFileSync } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { insertAuditEvents } from '../src/db/audit-events.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { projectRoot } from '../src/paths.js'
import { uuidV7Source } from '../src/lib/uuid.js'
import { verifyExportFile } from '../src/audit/verify.js'
import { startSinkSmtp } from '../scripts/lib/measure-peers.js'
import { cpuUs, rssMb, type Pinning } from './load.js'
import { cleanUp, startService, stop, throwawayDatabase } from './servers.js'
import { withServiceApp } from './in-process.js'

// `npm run bench -- --audit-export`: the audit trail exported whole (issue 55, item 1), on
// PostgreSQL. `records` audit records (1,000,000 by default) of one workspace are written into a
// throwaway database by the service's own chained batch insert (each record hashed onto the one
// before, as the service records them: issue 55, item 4); the service runs as `npm start` runs it
// (compiled, its own process) and GET /api/audit-events/export is read to the end over HTTP, once
// as NDJSON and once as CSV, as fast as the client takes it. Per format: records/s (wall time,
// request to last byte), the service's peak RSS above its idle RSS (sampled every 50 ms from
// /proc), its CPU time per record, the bytes, and that every record arrived once, in order. The
// NDJSON file is then verified as `npm run audit:verify` does (src/audit/verify.ts): its time and
// what it found. Targets: ≥ 50,000 records/s, ≤ 50 MB above idle, the file verified; printed
// MET / MISS.

export interface AuditExportOptions {
  pgUrl: string
  pin: Pinning
  records: number
  build: boolean
}

const TARGET_RECORDS_PER_SECOND = 50_000
const TARGET_RSS_ABOVE_IDLE_MB = 50
const write = (s: string): void => { process.stdout.write(s) }
const loadOf = (): string => loadavg().map(l => l.toFixed(2)).join(' ')

/** A workspace with an admin and an `audit:read` key, made by the service's own services on `databaseUrl`. */
async function auditKey (databaseUrl: string): Promise<{ workspaceId: string, key: string }> {
  return await withServiceApp(databaseUrl, async app => {
    const now = new Date()
    const ws = await insertWorkspace(app.db, { name: 'Audit export', now })
    const email = 'admin@audit.bench.test'
    const admin = await insertUser(app.db, { workspaceId: ws.id, email, name: null, role: 'admin', now })
    const key = await app.services.apiKeys.create({
      kind: 'session',
      userId: admin.id,
      workspaceId: ws.id,
      email,
      name: null,
      role: 'admin',
      sessionId: null,
      apiKeyId: null,
      requestId: null
    }, { name: 'SIEM', scopes: ['audit:read'] })
    return { workspaceId: ws.id, key: key.secret }
  })
}

const SEED_BATCH = 5_000
const ACTOR = {
  type: 'user', id: 'd4f0c3a2-1b2c-4d5e-8f90-0a1b2c3d4e5f', label: 'ada@example.com', source: 'web', requestId: null
} as const

/**
 * `n` records of the workspace, 30 ms apart, after the key's own api_key.created: written through
 * insertAuditEvents (src/db/audit-events.ts), the chain's batch insert, a transaction per 5,000.
 */
async function seed (databaseUrl: string, workspaceId: string, n: number): Promise<number> {
  return await withServiceApp(databaseUrl, async app => {
    const idAt = uuidV7Source()
    const start = Date.parse('2026-01-01T00:00:00Z')
    for (let from = 1; from <= n; from += SEED_BATCH) {
      const batch = Array.from({ length: Math.min(SEED_BATCH, n - from + 1) }, (_, k) => {
        const i = from + k
        const now = new Date(start + i * 30)
        return {
          id: idAt(now),
          eventType: null,
          entry: {
            workspaceId,
            action: 'invitation.created' as const,
            actor: ACTOR,
            target: { type: 'invitation' as const, id: `0190a1b2-0000-7000-8000-${String(i).padStart(12, '0')}` },
            payload: { email: `p${i}@example.com`, role: 'member' },
            now
          }
        }
      })
      await app.db.transaction(async tx => { await insertAuditEvents(tx, batch) })
    }
    await app.db.query('ANALYZE audit_events')
    const r = await app.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM audit_events WHERE workspace_id = $1', [workspaceId])
    return r.rows[0]?.n ?? 0
  })
}

interface Read { seconds: number, bytes: number, records: number, ordered: boolean, peakMb: number, cpuUs: number }

/** The export read to the end as `accept`, with the service's peak RSS and CPU meanwhile. */
async function readExport (port: number, key: string, accept: string, pid: number, save?: WriteStream): Promise<Read> {
  let peakMb = 0
  const timer = setInterval(() => { peakMb = Math.max(peakMb, rssMb(pid)) }, 50)
  const cpuBefore = cpuUs(pid)
  const started = performance.now()
  try {
    return await new Promise<Read>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1', port, path: '/api/audit-events/export', headers: { authorization: `Bearer ${key}`, accept }
      }, res => {
        if (res.statusCode !== 200) { reject(new Error(`export: ${res.statusCode ?? 0}`)); return }
        let bytes = 0
        let records = 0
        let ordered = true
        let last = ''
        let rest = ''
        const csv = accept === 'text/csv'
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          save?.write(chunk)
          bytes += Buffer.byteLength(chunk)
          const lines = (rest + chunk).split('\n')
          rest = lines.pop() ?? ''
          for (const line of lines) {
            if (csv && line.startsWith('id,')) continue
            const id = csv ? line.slice(1, 37) : line.slice(7, 43)
            if (id <= last) ordered = false
            last = id
            records++
          }
        })
        res.on('end', () => {
          save?.end()
          peakMb = Math.max(peakMb, rssMb(pid))
          const seconds = (performance.now() - started) / 1000
          resolve({ seconds, bytes, records, ordered, peakMb, cpuUs: cpuUs(pid) - cpuBefore })
        })
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
  } finally {
    clearInterval(timer)
  }
}

export async function runAuditExport (o: AuditExportOptions): Promise<boolean> {
  if (o.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  const smtp = await startSinkSmtp()
  const database = await throwawayDatabase(o.pgUrl, 'ws_bench_audit')
  const dir = mkdtempSync(join(tmpdir(), 'bench-audit-export-'))
  const file = join(dir, 'export.ndjson')
  let met = true
  try {
    const { workspaceId, key } = await auditKey(database.url)
    const seeding = performance.now()
    const expected = await seed(database.url, workspaceId, o.records)
    const seeded = ((performance.now() - seeding) / 1000).toFixed(1)
    write(`audit export: PostgreSQL, ${o.records.toLocaleString('en')} records of one workspace ` +
      `(seeded in ${seeded} s), GET /api/audit-events/export read to the end\n`)
    const svc = await startService(o.pin, 'postgres', smtp.url, database.url, null)
    const pid = svc.proc.child.pid ?? 0
    write(`load average ${loadOf()} (${cpus().length} CPUs) before\n`)
    // Warm: a small export, then the idle RSS the peak is measured against.
    await readExport(svc.port, key, 'application/x-ndjson', pid).catch(() => undefined)
    await new Promise(resolve => setTimeout(resolve, 2000))
    const idleMb = rssMb(pid)
    write(`  service idle RSS ${idleMb.toFixed(1)} MB\n`)
    for (const accept of ['application/x-ndjson', 'text/csv']) {
      const save = accept === 'application/x-ndjson' ? createWriteStream(file) : undefined
      const r = await readExport(svc.port, key, accept, pid, save)
      if (save !== undefined && !save.writableFinished) {
        await new Promise<void>(resolve => save.once('finish', () => { resolve() }))
      }
      const rate = r.records / r.seconds
      const above = r.peakMb - idleMb
      const whole = r.records === expected && r.ordered
      const mb = (r.bytes / 1e6).toFixed(0)
      write(`  ${accept}: ${r.records.toLocaleString('en')} records, ${mb} MB in ` +
        `${r.seconds.toFixed(1)} s: ${rate.toFixed(0)} records/s; service CPU ${(r.cpuUs / r.records).toFixed(2)} µs ` +
        `a record; peak RSS ${r.peakMb.toFixed(1)} MB (${above.toFixed(1)} MB above idle); ` +
        `${whole ? 'every record once, in order' : 'RECORDS MISSING OR OUT OF ORDER'}\n`)
      const rateMet = rate >= TARGET_RECORDS_PER_SECOND
      const rssMet = above <= TARGET_RSS_ABOVE_IDLE_MB
      write(`${rateMet ? 'MET ' : 'MISS'}  ${accept} ≥ ${TARGET_RECORDS_PER_SECOND.toLocaleString('en')} records/s: ` +
        `${rate.toFixed(0)}\n`)
      write(`${rssMet ? 'MET ' : 'MISS'}  ${accept} peak RSS ≤ ${TARGET_RSS_ABOVE_IDLE_MB} MB above idle: ` +
        `${above.toFixed(1)}\n`)
      met &&= rateMet && rssMet && whole
    }
    write(`load average ${loadOf()} after\n`)
    await stop(svc.proc.child)
    const verified = await verifyFile(file, expected)
    met &&= verified
  } finally {
    rmSync(dir, { recursive: true, force: true })
    cleanUp()
    await smtp.close()
    await database.drop()
  }
  return met
}

/** The NDJSON export checked offline, as `npm run audit:verify -- export.ndjson` checks it. */
async function verifyFile (file: string, expected: number): Promise<boolean> {
  const rssBefore = process.memoryUsage().rss
  let peak = rssBefore
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 50)
  const started = performance.now()
  try {
    const report = await verifyExportFile(file)
    const seconds = (performance.now() - started) / 1000
    const verified = report.findings.length === 0 && report.unchained === 0 && report.records === expected
    write(`  audit:verify on the NDJSON file: ${report.records.toLocaleString('en')} records ` +
      `(${report.unchained} before the chain) in ${seconds.toFixed(1)} s, ${report.findings.length} findings; ` +
      `verifier peak RSS ${((peak - rssBefore) / 1e6).toFixed(1)} MB above its start\n`)
    for (const f of report.findings.slice(0, 5)) write(`    ${f.message}\n`)
    write(`${verified ? 'MET ' : 'MISS'}  the exported file verified (every record chained, 0 findings)\n`)
    return verified
  } finally {
    clearInterval(timer)
  }
}
