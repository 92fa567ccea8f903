import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import pg from 'pg'
import { projectRoot } from '../../src/paths.js'
import { TEST_DATABASE_URL } from '../helpers/build.js'
import { tsImport, until } from '../helpers/service-process.js'

// `npm run bench` on PostgreSQL makes throwaway databases and drops them in `finally` blocks,
// which Ctrl-C never reaches: a bench interrupted mid-run left its `ws_bench_…` database on the
// server. bench/servers.ts now drops them on SIGINT / SIGTERM and exits 128 + the signal.

const skip = TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
t.setTimeout(60_000)

const SCRIPT = `
import { throwawayDatabase } from './bench/servers.ts'
const made = await throwawayDatabase(process.env.SERVER_URL, 'ws_benchsig')
console.log(new URL(made.url).pathname.slice(1))
setInterval(() => {}, 1000)
`

for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  t.test(`a bench stopped by ${signal} drops its throwaway database`, { skip }, async t => {
    const child = spawn(process.execPath, [...tsImport, '--input-type=module', '-e', SCRIPT], {
      cwd: projectRoot, env: { ...process.env, SERVER_URL: TEST_DATABASE_URL as string }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString() })
    child.stderr.on('data', (c: Buffer) => { err += c.toString() })
    const exited = once(child, 'exit')
    await until('the database\'s name on stdout', () => {
      if (out.includes('\n')) return true
      if (child.exitCode !== null) throw new Error(`the bench exited: ${err}`)
      return undefined
    }, 30_000, 50)
    const name = out.trim()
    t.match(name, /^ws_benchsig_\d+_\d+_1$/, 'the database was made')
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string })
    await admin.connect()
    t.teardown(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    })
    const exists = async (): Promise<boolean> =>
      (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1
    t.ok(await exists(), 'it exists while the bench runs')
    child.kill(signal)
    const [exitCode] = await exited
    t.equal(exitCode, code, `exit code ${code}`)
    t.match(err, `bench: ${signal}: dropping 1 throwaway database(s)`, 'it says what it drops')
    t.notOk(await exists(), 'it is gone')
  })
}
