import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { EnvSchema } from '../../src/config.js'
import { contractPath, projectRoot } from '../../src/paths.js'
import { nginxConf } from '../../scripts/lib/cluster.js'
import { startCommand } from '../../scripts/lib/start-command.js'
import { apiKeyScopes } from '../../src/generated/api-key-scopes.js'

// The README and docs/ say what the code does; this keeps them from drifting apart by the names
// a reader copies from them: environment variables (against the config schema, both ways),
// `npm run` scripts (against package.json), relative links and their #anchors, and the paths of
// files in this repository. Everything is derived: a new setting, script or page needs no edit here.

const CONFIGURATION = 'docs/configuration.md'

// Upper-case names the docs mention that are not this service's settings, each with its reason.
const NOT_SETTINGS: Record<string, string> = {
  OTEL_TRACES_SAMPLER: 'read by the OpenTelemetry SDK itself (docs/operating.md, "Traces")',
  OTEL_TRACES_SAMPLER_ARG: 'read by the OpenTelemetry SDK itself',
  CONSOLE_SCREENSHOTS: 'where test/console/console.test.ts saves its screenshots, read by that test',
  TEST_DATABASE_URL: 'the test suite\'s PostgreSQL, read by test/helpers/build.ts',
  TEST_REDIS_URL: 'the test suite\'s Redis, read by test/helpers/build.ts',
  WEBHOOK_SECRET: 'a receiver\'s own variable in the webhook verification example',
  NODE_OPTIONS: 'Node\'s own, used to preload scripts/test-cpu.cjs (docs/performance.md)',
  TEST_CPU_LOG: 'where scripts/test-cpu.cjs writes, read by that script',
  BENCH_SMOKE_INSTRUCTIONS: 'opts in to the --instructions smoke run, read by test/ops/bench-smoke-postgres.test.ts',
  NODE26_DIR: 'where .ci/run installs Node 26 for its second suite, read by .ci/run',
  LISTEN_FDS: 'systemd\'s socket activation, read by src/config/listen-socket.ts',
  LISTEN_PID: 'systemd\'s socket activation, read by src/config/listen-socket.ts'
}

/** README.md and every Markdown file under docs/, as paths relative to the project root. */
function docFiles (): string[] {
  const docs = readdirSync(join(projectRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter(f => f.endsWith('.md')).map(f => join('docs', f)).sort()
  return ['README.md', ...docs]
}
const read = (file: string): string => readFileSync(join(projectRoot, file), 'utf8')

const settings = new Set(Object.keys(EnvSchema.properties))
const contract = parseYaml(readFileSync(contractPath, 'utf8')) as {
  components: { schemas: { ErrorCode: { enum: string[] } } }
}
const errorCodes = new Set(contract.components.schemas.ErrorCode.enum)

/** The fenced code blocks of a Markdown text: the commands a reader copies whole. */
const fencesOf = (text: string): string[] => [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map(m => m[1] ?? '')

/** Code spans and fenced code blocks of a Markdown text: where a reader finds names to copy. */
function codeOf (text: string): string[] {
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '')
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map(m => m[1] ?? '')
  return [...fencesOf(text), ...spans]
}

/** Names written as environment variables: SNAKE_CASE with at least one underscore, or a setting. */
function envNamesIn (text: string): Set<string> {
  const names = new Set<string>()
  for (const code of codeOf(text)) {
    for (const m of code.matchAll(/(?<![\w.$-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)(?![\w-])/g)) {
      const name = m[1] ?? ''
      if (name.includes('_') || settings.has(name)) names.add(name)
    }
  }
  return names
}

t.test('every environment variable the docs name is a setting in the config schema', async t => {
  for (const file of docFiles()) {
    for (const name of envNamesIn(read(file))) {
      if (settings.has(name) || errorCodes.has(name) || name in NOT_SETTINGS) continue
      t.fail(`${file} names ${name}, which is neither in EnvSchema (src/config.ts) nor an ErrorCode`)
    }
  }
  for (const name of Object.keys(NOT_SETTINGS)) {
    t.notOk(settings.has(name), `${name} is listed as not a setting, but EnvSchema has it`)
  }
})

t.test(`every setting in the config schema has its row in ${CONFIGURATION}`, async t => {
  // The first cell of each table row names the variables it documents (`A` / `B`, `A`, `B`).
  const rows = read(CONFIGURATION).split('\n').filter(l => l.startsWith('| `'))
  const documented = new Set(rows.flatMap(row => {
    const first = row.split('|')[1] ?? ''
    return [...first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(m => m[1] ?? '')
  }))
  t.ok(settings.size > 50, `the schema was read (${settings.size} settings)`)
  for (const name of settings) t.ok(documented.has(name), `${name} has a row in ${CONFIGURATION}`)
  for (const name of documented) t.ok(settings.has(name), `${CONFIGURATION}'s row ${name} is in EnvSchema`)
})

t.test('every `npm run <script>` the docs name is a script in package.json', async t => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
  let named = 0
  for (const file of docFiles()) {
    for (const m of read(file).matchAll(/\bnpm run (?:--silent |-s )?([\w:.-]+)/g)) {
      named++
      const script = m[1] ?? ''
      t.ok(script in pkg.scripts, `${file}: npm run ${script} is in package.json`)
    }
    for (const m of read(file).matchAll(/\bnpm (start|test)\b/g)) {
      t.ok((m[1] ?? '') in pkg.scripts, `${file}: npm ${m[1]} is in package.json`)
    }
  }
  t.ok(named > 10, `the docs were read (${named} npm run commands)`)
})

t.test('every command the docs give to run the service passes node npm start\'s flags', async t => {
  // A heap cap (or any flag) added to npm start and not to the production commands would leave a
  // deployment running another service than the one measured (scripts/lib/start-command.ts).
  const { nodeFlags, script } = startCommand()
  const escaped = script.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const run = new RegExp(`\\bnode((?:[ \\t]+--?[\\w-]+(?:=\\S+)?)*)[ \\t]+${escaped}\\b`, 'g')
  let runs = 0
  for (const file of docFiles()) {
    // Fenced commands everywhere; in the README its code spans too (it says what npm start runs).
    // Elsewhere a span may name the command of an earlier measurement (docs/performance.md).
    const code = file === 'README.md' ? codeOf(read(file)) : fencesOf(read(file))
    for (const m of code.join('\n').matchAll(run)) {
      runs++
      const flags = (m[1] ?? '').trim().split(/\s+/).filter(f => f !== '')
      t.same(flags, nodeFlags, `${file}: \`${m[0].trim()}\` passes ${nodeFlags.join(' ')}`)
    }
  }
  t.ok(runs >= 3, `the docs were read (${runs} commands running ${script})`)
})

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf (text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '')
  for (const m of prose.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (m[1] ?? '').toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}

t.test('relative links between the docs resolve, anchors included', async t => {
  let links = 0
  for (const file of docFiles()) {
    const prose = read(file).replace(/^```[^\n]*\n[\s\S]*?^```/gm, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1] ?? ''
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue // https:, mailto:
      links++
      const [path = '', anchor] = href.split('#')
      const target = path === '' ? file : relative(projectRoot, join(projectRoot, dirname(file), path))
      if (!t.ok(existsSync(join(projectRoot, target)), `${file}: link ${href} → ${target} exists`)) continue
      if (anchor !== undefined && target.endsWith('.md')) {
        t.ok(anchorsOf(read(target)).has(anchor), `${file}: link ${href} → a heading #${anchor} in ${target}`)
      }
    }
  }
  t.ok(links > 10, `the docs were read (${links} relative links)`)
})

t.test('every repository file the docs name exists', async t => {
  // Paths inside code spans that start at a top-level folder of this repository; placeholders
  // (NNN, x.test.ts, a generated client's own file) are written as such and skipped, and so is
  // what a tool writes (.gitignore's entries).
  const placeholder = /NNN|\/x\.test\.ts$|<|…|\*/
  const ignored = read('.gitignore').split('\n').filter(l => l.includes('/') && !l.startsWith('#'))
  for (const file of docFiles()) {
    for (const code of codeOf(read(file))) {
      for (const m of code.matchAll(/(?<![\w./-])((?:src|handlers|test|scripts|bench|docs)\/[\w./-]*[\w/])/g)) {
        const path = (m[1] ?? '').replace(/\.js$/, '.ts')
        if (placeholder.test(path) || path === 'src/api.d.ts' || ignored.some(i => path.startsWith(i))) continue
        const candidates = [path, path.replace(/\.ts$/, '.js'), path.replace(/\.ts$/, '.mjs')]
        t.ok(candidates.some(p => existsSync(join(projectRoot, p))), `${file} names ${m[1]}, which exists`)
      }
    }
  }
})

t.test('docs/clients.md shows the contract\'s scope catalogue as its table, in its words and order', async t => {
  const text = read('docs/clients.md')
  const table = text.split('<!-- scopes:begin')[1]?.split('<!-- scopes:end')[0] ?? ''
  const rows = [...table.matchAll(/^\| `([a-z:-]+)` \| (.+) \|$/gm)].map(m => ({ scope: m[1], description: m[2] }))
  t.same(rows, apiKeyScopes.map(s => ({ scope: s.scope, description: s.description })), 'the table is the ApiKeyScope catalogue')
})

t.test('scripts/test-cpu.cjs, which docs/performance.md measures the suite with: a line per process, then a report', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'test-cpu-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const log = join(dir, 'cpu.tsv')
  const script = join(projectRoot, 'scripts/test-cpu.cjs')
  // A process that starts another: both inherit the preload through NODE_OPTIONS.
  execFileSync(process.execPath, ['-e', 'require(\'node:child_process\').execFileSync(process.execPath, [\'-e\', \'1\'])'], {
    env: { ...process.env, TEST_CPU_LOG: log, NODE_OPTIONS: `--require ${script}` }
  })
  const lines = readFileSync(log, 'utf8').split('\n').filter(l => l !== '')
  t.equal(lines.length, 2, 'one line per process')
  for (const line of lines) t.match(line, /^\d+\t\d+\t\d+\.\d{2}\t\d+\.\d\t/, 'pid, parent, CPU-s, wall s, what')
  const report = execFileSync(process.execPath, [script, log], { encoding: 'utf8' })
  t.match(report, /^2 processes, \d+ CPU-s\n/)
  t.match(report, /other \(tap, scripts, compilers\): 2 processes/)
})

/** The directives of each block of an nginx text by the block's path (`server > location /`), comments dropped. */
function nginxBlocks (text: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>()
  const path: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim().replace(/\s+/g, ' ')
    if (line === '') continue
    if (line.endsWith('{')) { path.push(line.slice(0, -1).trim()); continue }
    if (line === '}') { path.pop(); continue }
    blocks.set(path.join(' > '), [...(blocks.get(path.join(' > ')) ?? []), line])
  }
  return blocks
}

t.test('docs/operating.md\'s deployment of several instances is the one scripts/lib/cluster.ts runs, and its restart checks out', async t => {
  const text = read('docs/operating.md')
  const section = text.slice(text.indexOf('### A real deployment'), text.indexOf('\n## ', text.indexOf('### A real deployment')))
  const fences = fencesOf(section)
  const nginx = nginxBlocks(fences.find(f => f.includes('upstream workspace')) ?? '')
  const ports = (nginx.get('upstream workspace') ?? []).flatMap(d => /^server 127\.0\.0\.1:(\d+) /.exec(d)?.[1] ?? []).map(Number)
  t.ok(ports.length >= 2, `the docs' upstream lists the instances (${ports.join(', ')})`)
  // What the cluster writes for the same instances, blocks found by their names.
  const written = nginxBlocks(nginxConf('/prefix', 8080, ports))
  const block = (blocks: Map<string, string[]>, name: string): string[] =>
    [...blocks.entries()].find(([key]) => key === name || key.endsWith(` > ${name}`))?.[1] ?? []
  for (const name of ['upstream workspace', 'location /']) {
    t.same(block(nginx, name), block(written, name), `${name}: the directives scripts/lib/cluster.ts writes, in its order`)
  }

  // The units: the socket on the upstream's address, the service on that socket, timeouts in order.
  const unit = (file: string): string => fences.find(f => f.includes(`/etc/systemd/system/${file}`)) ?? ''
  const socket = unit('workspace@.socket')
  const service = unit('workspace@.service')
  t.match(socket, /^ListenStream=127\.0\.0\.1:%i$/m, 'the socket unit listens where the upstream\'s servers are, on the instance\'s port')
  t.match(service, /^Requires=workspace@%i\.socket$/m, 'the service takes its own socket')
  const drainMs = Number(/SHUTDOWN_DRAIN_MS=(\d+)/.exec(service)?.[1])
  const upstreamKeepAliveMs = Number(/^keepalive_timeout (\d+)s;$/m.exec(block(nginx, 'upstream workspace').join('\n'))?.[1]) * 1000
  const defaults = EnvSchema.properties as unknown as Record<string, { default?: number }>
  const shutdownMs = defaults.SHUTDOWN_TIMEOUT_MS?.default ?? 0
  t.ok(drainMs > upstreamKeepAliveMs, `SHUTDOWN_DRAIN_MS (${drainMs}) above nginx's upstream keepalive_timeout (${upstreamKeepAliveMs} ms)`)
  t.ok((defaults.KEEP_ALIVE_TIMEOUT_MS?.default ?? 0) > upstreamKeepAliveMs, 'KEEP_ALIVE_TIMEOUT_MS above it too: nginx closes idle connections, never the service')
  t.ok(shutdownMs >= 2 * drainMs, `SHUTDOWN_TIMEOUT_MS (${shutdownMs}) covers the drain twice`)
  t.ok(Number(/^TimeoutStopSec=(\d+)$/m.exec(service)?.[1]) * 1000 > shutdownMs, 'systemd waits longer than the service\'s own deadline')

  // The rolling restart: the units it restarts and the path it asks are the ones defined above.
  const runbook = fences.find(f => f.includes('systemctl restart')) ?? ''
  t.match(runbook, new RegExp(`^for port in ${ports.join(' ')}; do$`, 'm'), 'it restarts every instance of the upstream')
  t.match(runbook, /systemctl restart "workspace@\$port"/, 'the service unit, not its socket')
  const asked = [...runbook.matchAll(/http:\/\/127\.0\.0\.1:\$port(\/[\w/]+)/g)].map(m => m[1] ?? '')
  const paths = (parseYaml(readFileSync(contractPath, 'utf8')) as { paths: Record<string, { get?: unknown }> }).paths
  t.ok(asked.length > 0, 'it asks the instance whether it answers')
  for (const p of asked) t.ok(paths[p]?.get !== undefined, `GET ${p} is in openapi.yaml`)
})
