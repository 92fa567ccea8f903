import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'

// src/server.ts closes the app on signals and on fatal errors alike (close-with-grace): an
// unhandled rejection is logged once, the app closes (the port stops answering) and the process
// exits 1; SIGTERM exits 0 (config.test.ts, nginx.test.ts).

t.test('an unhandled rejection closes the server gracefully, logs once and exits 1', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-shutdown-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { DATABASE_URL: _server, ...env } = process.env
  const child = spawn(process.execPath, [
    '--import', 'tsx', '--import', './test/helpers/reject-on-stdin.ts', 'src/server.ts'
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
