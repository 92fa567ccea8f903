import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { startCluster } from './lib/cluster.js'

// `npm run cluster -- --instances 3 [--port 8080]`: N instances of the service on PostgreSQL
// (DATABASE_URL) and Redis (REDIS_URL) behind nginx on loopback, for trying several instances on
// one machine. Ctrl-C stops them all (each drains first). docs/operating.md shows the same
// layout for a real deployment.

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    port: { type: 'string', default: '8080' }
  }
})
const count = Number(values.instances)
const port = Number(values.port)
if (!Number.isInteger(count) || count < 1 || count > 16) {
  console.error('cluster: --instances must be an integer from 1 to 16')
  process.exit(1)
}
const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || !/^postgres(ql)?:\/\//.test(databaseUrl)) {
  console.error('cluster: DATABASE_URL (postgres://…) is required: the embedded database is one process\'s')
  process.exit(1)
}
if (process.env.REDIS_URL === undefined) {
  console.error('cluster: REDIS_URL is not set: each instance counts rate limits on its own')
}
// Every instance must sign and read the same cookies.
const sessionSecret = process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url')
const env = Object.fromEntries(
  Object.entries({ ...process.env, SESSION_SECRET: sessionSecret, PUBLIC_URL: process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}` })
    .filter((e): e is [string, string] => e[1] !== undefined)
)
const cluster = await startCluster({ instances: count, port, env })
console.log(`${count} instances (${cluster.instances.map(i => i.port).join(', ')}) behind nginx at ${cluster.url}`)
for (const i of cluster.instances) {
  const link = /Open this link to set up the first workspace and its admin: (\S+)/.exec(i.log())?.[1]
  if (link !== undefined) console.log(`No workspace yet: ${link}`)
}
console.log('Ctrl-C stops them (each drains first).')
let stopping = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    console.log('stopping…')
    cluster.close().then(() => { process.exit(0) }, (err: Error) => { console.error(err.message); process.exit(1) })
  })
}
