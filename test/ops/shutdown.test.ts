import t from 'tap'
import { spawn } from 'node:child_process'
import { Agent, get as httpGet } from 'node:http'
import { projectRoot } from '../../src/paths.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { until, tsImport } from '../helpers/service-process.js'
import { assertContract } from '../helpers/contract.js'
import { seededDataDir } from '../helpers/build.js'

// src/server.ts closes the app on signals and on fatal errors alike (close-with-grace): an
// unhandled rejection is logged once, the app closes (the port stops answering) and the process
// exits 1; SIGTERM exits 0 (config.test.ts, nginx.test.ts).

t.test('an unhandled rejection closes the server gracefully, logs once and exits 1', async t => {
  const dir = await seededDataDir(t, 'ws-shutdown-')
  const { DATABASE_URL: _server, ...env } = process.env
  const child = spawn(process.execPath, [
    ...tsImport, '--import', './test/helpers/reject-on-stdin.ts', 'src/server.ts'
  ], {
    cwd: projectRoot, env: { ...env, PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'info' }, stdio: ['pipe', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  let out = ''
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const ready = await new Promise<{ url?: string } | null>(resolve => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const line = out.split('\n').find(l => l.includes('workspace service ready'))
      if (line !== undefined) resolve(JSON.parse(line) as { url?: string })
    })
    child.once('exit', () => { resolve(null) })
  })
  t.ok(ready, 'the server started')
  const address = out.split('\n').map(l => { try { return JSON.parse(l) as { msg?: string } } catch { return {} } }).find(l => l.msg?.startsWith('Server listening at ') === true)?.msg?.replace('Server listening at ', '')
  t.ok(address, 'the listening address is logged')
  t.equal((await fetch(`${address as string}/api/health`)).status, 200, 'serving')

  child.stdin.write('injected fatal error\n')
  t.equal(await exited, 1, 'exit 1')
  const lines = out.split('\n').filter(l => l.includes('injected fatal error'))
  t.equal(lines.length, 1, 'the error is logged once')
  t.match(
    JSON.parse(lines[0] ?? '{}'),
    { level: 60, msg: 'fatal error: shutting down', err: { message: 'injected fatal error' } }
  )
  await t.rejects(fetch(`${address as string}/api/health`), 'the port is closed')
})

t.test('SIGTERM with SHUTDOWN_DRAIN_MS: health 503 and every answer closes its connection, then the port closes, exit 0', async t => {
  const dir = await seededDataDir(t, 'ws-drain-')
  const port = await freePort()
  const { DATABASE_URL: _server, ...env } = process.env
  const DRAIN_MS = 3000
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: { ...env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: String(DRAIN_MS) },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  const url = `http://127.0.0.1:${port}`
  await until('the server', async () => (await fetch(`${url}/api/health`)).status === 200 ? true : undefined)
  // A keep-alive connection, held as a proxy holds one.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  const before = await get(agent, port, '/api/health')
  t.equal(before.status, 200)
  t.equal(before.headers.connection, 'keep-alive', 'before: connections are kept alive')

  child.kill('SIGTERM')
  await until('the drain', async () => out.includes('shutting down: draining') ? true : undefined, 30_000)
  const health = await get(agent, port, '/api/health')
  t.equal(health.status, 503, 'draining: health answers 503, so a load balancer routes elsewhere')
  t.match(JSON.parse(health.body), { code: 'SERVICE_UNAVAILABLE', checks: { database: { status: 'ok' }, instance: { status: 'draining' } } })
  t.equal(health.headers.connection, 'close', 'and closes its connection')
  assertContract(t, 'GET', '/api/health', { statusCode: health.status, headers: health.headers, body: health.body })
  const work = await get(agent, port, '/api/openapi.json')
  t.equal(work.status, 200, 'draining: other requests are still served')
  t.equal(work.headers.connection, 'close', 'each answer closing its connection')
  t.equal(await exited, 0, 'then it stops, exit 0')
  t.ok(out.includes('drained: no longer listening'), 'the drain is logged')
  await t.rejects(fetch(`${url}/api/health`), 'the port is closed')
})

async function get (agent: Agent, port: number, path: string): Promise<{
  status: number, headers: Record<string, string | string[] | undefined>, body: string
}> {
  return await new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, agent }, res => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body })
      })
    }).on('error', reject)
  })
}
