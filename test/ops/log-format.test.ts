import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { projectRoot } from '../../src/paths.js'
import { prettyLogs } from '../../src/logger.js'
import { closedPort } from '../helpers/smtp.js'
import { seededDataDir } from '../helpers/build.js'
import { tsImport, until } from '../helpers/service-process.js'

// Logs read by a person at a terminal, and by machines everywhere else: the real server started
// once with stdout on a pseudo-terminal (util-linux `script`) and once on a pipe. Either way the
// token in a logged URL is redacted.

const SECRET = 'tok_must_not_reach_the_log'
// util-linux `script` (Debian's bsdutils, essential) gives the server a pseudo-terminal.
const noScript = existsSync('/usr/bin/script') ? false : '/usr/bin/script (util-linux) not found: no pseudo-terminal to test with'
// eslint-disable-next-line no-control-regex
const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '')

t.test('the decision: a terminal gets pretty lines unless LOG_FORMAT says otherwise', async t => {
  t.equal(prettyLogs('auto', { isTTY: true }), true)
  t.equal(prettyLogs('auto', { isTTY: false }), false)
  t.equal(prettyLogs('auto', {}), false, 'a pipe or a file has no isTTY')
  t.equal(prettyLogs('json', { isTTY: true }), false)
  t.equal(prettyLogs('pretty', {}), true)
})

/** Starts the server (through `script` when `tty`), requests a URL with a token, stops it; its output. */
async function run (t: Test, tty: boolean): Promise<string> {
  const dir = await seededDataDir(t, 'ws-log-format-')
  const port = await closedPort()
  const { DATABASE_URL: _db, REDIS_URL: _redis, LOG_FORMAT: _format, ...env } = process.env
  const server = `${JSON.stringify(process.execPath)} --import ${JSON.stringify(tsImport[1])} src/server.ts`
  // detached: its own process group, so SIGTERM reaches the server under `script` too.
  const options = { cwd: projectRoot, env: { ...env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'info' }, detached: true }
  const child = tty
    ? spawn('/usr/bin/script', ['-qec', server, '/dev/null'], options)
    : spawn(process.execPath, [...tsImport, 'src/server.ts'], options)
  const pid = child.pid ?? 0
  t.teardown(() => { if (child.exitCode === null) process.kill(-pid, 'SIGKILL') })
  const exited = new Promise<void>(resolve => { child.once('exit', () => { resolve() }) })
  let out = ''
  child.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString()
      if (out.includes('No workspace yet')) resolve()
    })
    child.once('exit', () => { reject(new Error(`the server exited early:\n${out}`)) })
  })
  const res = await fetch(`http://127.0.0.1:${port}/signup?token=${SECRET}`)
  t.equal(res.status, 200)
  await res.text()
  // The request's "completed" line is written right after the answer; wait for it, then stop.
  await until('the "request completed" line', () => out.includes('request completed') || undefined, 30_000, 50)
  process.kill(-pid, 'SIGTERM')
  await exited
  return out
}

t.test('stdout on a terminal: one readable line per record, the token redacted', {
  skip: noScript, timeout: 120_000
}, async t => {
  const out = stripAnsi(await run(t, true))
  t.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: workspace service ready \{"url":/m, 'time, level, message, then the fields')
  t.match(out, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: No workspace yet\. Open this link .*\/setup\?token=/m)
  t.match(out, /INFO: incoming request \{.*"url":"\/signup\?token=\[REDACTED\]"/, 'the redaction holds')
  t.notMatch(out, SECRET)
  t.notMatch(out, /^\{"level":/m, 'no JSON records')
})

t.test('stdout on a pipe: JSON lines, the token redacted', { timeout: 120_000 }, async t => {
  const out = await run(t, false)
  const lines = out.split('\n').filter(l => l !== '')
  t.ok(lines.length > 3)
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line), `a JSON record: ${line.slice(0, 60)}`)
  t.ok(lines.some(l => (JSON.parse(l) as { msg?: string }).msg === 'workspace service ready'))
  t.match(out, '"url":"/signup?token=[REDACTED]"')
  t.notMatch(out, SECRET)
})
