import t from 'tap'
import type { Test } from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { projectRoot } from '../../src/paths.js'
import { diffContracts, type Change } from '../../scripts/lib/contract-diff.js'
import { versionProblems } from '../../scripts/lib/contract-versions.js'
import { readContract } from '../../scripts/lib/contract-project.js'
import { renderChangelog } from '../../scripts/lib/contract-changelog.js'
import { tsImport } from '../helpers/service-process.js'

// The breaking-change gate (npm run contract:check): a copy of the released 0.1.0 contract with
// one edit of each kind the gate must catch, at the version an addition would need (0.1.1, a
// patch) — refused, naming the change — and at the version a breaking change needs (0.2.0) —
// accepted. Additions pass at 0.1.1 and fail without a bump.

type Json = Record<string, any>

const released = readContract(join(projectRoot, 'contract', 'releases', '0.1.0.yaml')) as Json
const schemas = (d: Json): Json => d.components.schemas

function edited (edit: (d: Json) => void, version: string): Json {
  const copy = structuredClone(released)
  edit(copy)
  copy.info.version = version
  return copy
}

const breakingEdits: Record<string, { edit: (d: Json) => void, expect: RegExp }> = {
  'removed operation': {
    edit: d => { delete d.paths['/api/api-keys'].get },
    expect: /^GET \/api\/api-keys: operation removed$/m
  },
  'removed response field': {
    edit: d => {
      delete schemas(d).InviteUserResponse.properties.message
      schemas(d).InviteUserResponse.required = ['success']
    },
    expect: /^POST \/api\/users\/invite: response 200 `message` removed$/m
  },
  'narrowed type (request field: string to integer)': {
    edit: d => { schemas(d).CreateApiKeyRequest.properties.name = { type: 'integer' } },
    expect: /^POST \/api\/api-keys: request body `name`: type `string` → `integer`$/m
  },
  'changed type (response field: string to integer)': {
    edit: d => { schemas(d).InviteUserResponse.properties.message = { type: 'integer' } },
    expect: /^POST \/api\/users\/invite: response 200 `message`: type `string` → `integer`$/m
  },
  'narrowed format (maxLength lowered)': {
    edit: d => { schemas(d).InviteUserRequest.properties.email.maxLength = 100 },
    expect: /^POST \/api\/users\/invite: request body `email`: maxLength `254` → `100`$/m
  },
  'narrowed format (format added)': {
    edit: d => { schemas(d).CreateApiKeyRequest.properties.name.format = 'uuid' },
    expect: /^POST \/api\/api-keys: request body `name`: format `uuid` added$/m
  },
  'new required input (body field)': {
    edit: d => {
      schemas(d).InviteUserRequest.properties.team = { type: 'string' }
      schemas(d).InviteUserRequest.required.push('team')
    },
    expect: /^POST \/api\/users\/invite: request body: `team` now required$/m
  },
  'new required input (query parameter)': {
    edit: d => { d.paths['/api/api-keys'].get.parameters = [{ name: 'scope', in: 'query', required: true, schema: { type: 'string' } }] },
    expect: /^GET \/api\/api-keys: query parameter `scope` added \(required\)$/m
  },
  'new enum value in a response': {
    edit: d => { schemas(d).InvitationStatus.enum.push('bounced') },
    expect: /^GET \/api\/invitations: response 200 `items\[\]\.status`: enum value `bounced` added$/m
  },
  'changed status (200 to 201)': {
    edit: d => {
      const answers = d.paths['/api/users/invite'].post.responses
      answers['201'] = answers['200']
      delete answers['200']
    },
    expect: /^POST \/api\/users\/invite: response 200 removed$/m
  },
  'new status on an existing operation': {
    edit: d => { d.paths['/api/api-keys'].get.responses['429'] = { $ref: '#/components/responses/TooManyRequests' } },
    expect: /^GET \/api\/api-keys: response 429 added$/m
  },
  'removed webhook': {
    edit: d => { delete d.webhooks['api_key.revoked'] },
    expect: /^webhook api_key\.revoked: webhook removed$/m
  }
}

const listing = (changes: Change[], kind: Change['kind']) =>
  changes.filter(c => c.kind === kind).map(c => `${c.operation}: ${c.text}`).join('\n')

for (const [name, { edit, expect }] of Object.entries(breakingEdits)) {
  t.test(`breaking: ${name}`, async t => {
    const changes = diffContracts(released, edited(edit, '0.1.1'))
    t.match(listing(changes, 'breaking'), expect, 'the change is found and classified breaking')
    const refused = versionProblems('0.1.0', '0.1.1', changes)
    t.equal(refused.length, 1, 'a patch bump is refused')
    t.match(refused[0], /breaking change.* need info\.version 0\.2\.0 or later/)
    t.same(versionProblems('0.1.0', '0.2.0', changes), [], 'a minor bump (0.x) is accepted')
    t.match(versionProblems('0.1.0', '0.1.0', changes)[0], /still 0\.1\.0: set it to 0\.2\.0/, 'no bump is refused')
  })
}

t.test('additions pass with a patch bump, and need one', async t => {
  const changes = diffContracts(released, edited(d => {
    d.paths['/api/ping'] = { get: { operationId: 'getPing', security: [], responses: { 204: { description: 'Up.' } } } }
    schemas(d).InviteUserRequest.properties.note = { type: 'string', maxLength: 200 }
    schemas(d).InviteUserResponse.properties.expiresAt = { type: 'string', format: 'date-time' }
    d.paths['/api/api-keys'].get.parameters = [{ name: 'q', in: 'query', schema: { type: 'string' } }]
    d.paths['/api/api-keys'].get.deprecated = true
    // ErrorResponse's `code` is ErrorCode or any string: a new code is an addition.
    schemas(d).ErrorCode.enum.push('TEAPOT')
    d.tags.push({ name: 'Pings', description: 'A new group of operations.' })
  }, '0.1.1'))
  t.equal(listing(changes, 'breaking'), '', 'nothing breaking')
  t.match(listing(changes, 'non-breaking'), /^DELETE \/api\/api-keys\/\{apiKeyId\}: response 404 `code.\(anyOf 0\)`: enum value `TEAPOT` added$/m,
    'a value of an open enum (anyOf beside a plain string), whichever way the response is reached')
  t.match(listing(changes, 'non-breaking'), /^DELETE \/api\/api-keys\/\{apiKeyId\}: response 401 `code.\(anyOf 0\)`: enum value `TEAPOT` added$/m)
  t.match(listing(changes, 'non-breaking'), /^GET \/api\/ping: operation added$/m)
  t.match(listing(changes, 'non-breaking'), /^document: tag `Pings` added$/m, 'a tag added at the end')
  t.match(listing(changes, 'non-breaking'), /^POST \/api\/users\/invite: request body `note` added$/m)
  t.match(listing(changes, 'non-breaking'), /^POST \/api\/users\/invite: response 200 `expiresAt` added$/m)
  t.match(listing(changes, 'non-breaking'), /^GET \/api\/api-keys: query parameter `q` added$/m)
  t.match(listing(changes, 'deprecated'), /^GET \/api\/api-keys: operation deprecated$/m)
  t.same(versionProblems('0.1.0', '0.1.1', changes), [], 'a patch bump is enough')
  t.match(versionProblems('0.1.0', '0.1.0', changes)[0], /none breaking.*set it to 0\.1\.1/)
  t.match(versionProblems('0.1.0', '0.1.3', changes)[0], /not a next version of 0\.1\.0 \(one of 0\.1\.1, 0\.2\.0, 1\.0\.0\)/)
})

t.test('from 1.0.0 on: a breaking change needs a major, an addition a minor', async t => {
  const breaking = diffContracts(released, edited(breakingEdits['removed operation']?.edit ?? (() => {}), '1.4.3'))
  t.match(versionProblems('1.4.2', '1.4.3', breaking)[0], /breaking change.* need info\.version 2\.0\.0 or later/)
  t.match(versionProblems('1.4.2', '1.5.0', breaking)[0], /need info\.version 2\.0\.0 or later/, 'a minor is not enough')
  t.same(versionProblems('1.4.2', '2.0.0', breaking), [], 'a major is')
  const added = diffContracts(released, edited(d => {
    schemas(d).InviteUserRequest.properties.note = { type: 'string', maxLength: 200 }
  }, '1.4.3'))
  t.match(versionProblems('1.4.2', '1.4.3', added)[0], /need info\.version 1\.5\.0 or later/, 'an addition needs a minor, not a patch')
  t.same(versionProblems('1.4.2', '1.5.0', added), [])
})

t.test('prose is not a change', async t => {
  const changes = diffContracts(released, edited(d => {
    d.paths['/api/api-keys'].get.description = 'Reworded.'
    schemas(d).InviteUserRequest.properties.email.description = 'Reworded too.'
    d.tags[0]['x-displayName'] = 'Shown as'
  }, '0.1.0'))
  t.same(changes, [])
})

// The gate as CI runs it, on a project folder holding a copy of the contract's history (the
// released files named) and its changelog.
function gateCopy (t: Test, released: readonly string[]) {
  const root = mkdtempSync(join(tmpdir(), 'contract-gate-'))
  t.teardown(() => { rmSync(root, { recursive: true, force: true }) })
  mkdirSync(join(root, 'contract', 'releases'), { recursive: true })
  for (const version of released) {
    cpSync(join(projectRoot, 'contract', 'releases', `${version}.yaml`), join(root, 'contract', 'releases', `${version}.yaml`))
  }
  cpSync(join(projectRoot, 'docs', 'contract-changelog.md'), join(root, 'docs', 'contract-changelog.md'))
  const write = (doc: Json, version: string) => {
    writeFileSync(join(root, 'openapi.yaml'), stringify(doc))
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'copy', version }))
  }
  const run = async (command: string) => {
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath, [...tsImport, join(projectRoot, 'scripts', 'contract.ts'), command, '--root', root]
      )
      return { code: 0, stdout }
    } catch (err) {
      const e = err as { code: number, stdout: string }
      return { code: e.code, stdout: e.stdout }
    }
  }
  return { root, write, run }
}

t.test('npm run contract:check on a copy: fails on a breaking edit, says what to run, passes once fixed', async t => {
  const { root, write, run } = gateCopy(t, ['0.1.0'])
  write(edited(d => {
    breakingEdits['new enum value in a response']?.edit(d)
    d.paths['/api/api-keys'].get.deprecated = true // without x-deprecated-at: the service would not start
  }, '0.1.1'), '0.1.1')
  const failed = await run('check')
  t.equal(failed.code, 1, 'the gate fails')
  t.match(failed.stdout, /FAIL openapi\.yaml: GET \/api\/api-keys: deprecated, so x-deprecated-at needs a date/)
  t.match(failed.stdout, /FAIL 2 breaking changes since 0\.1\.0 need info\.version 0\.2\.0 or later/)
  t.match(failed.stdout, /FAIL docs\/contract-changelog\.md does not list the contract's changes as they are: run `npm run contract:changelog`/)
  t.match(failed.stdout, /GET \/api\/invitations: response 200 `items\[\]\.status`: enum value `bounced` added/)
  t.comment(failed.stdout)

  write(edited(breakingEdits['new enum value in a response']?.edit ?? (() => {}), '0.2.0'), '0.2.0')
  t.equal((await run('changelog')).code, 0)
  const changelog = readFileSync(join(root, 'docs', 'contract-changelog.md'), 'utf8')
  t.match(changelog, /## 0\.2\.0 \(unreleased; compared with 0\.1\.0\)/)
  t.match(changelog, /- \*\*Breaking\*\* response 200 `status`: enum value `bounced` added — `DELETE \/api\/invitations\/\{invitationId\}`/)
  const passed = await run('check')
  t.equal(passed.code, 0, passed.stdout)
  t.match(passed.stdout, /ok: the version fits the changes/)
})

// The promise of 1.x, on the contract as released: a breaking edit is refused at a patch or a
// minor of 1.0.0, with the version it needs (that the next major takes it is shown above, on
// versionProblems). Only 1.0.0 is in the copy's history: each run diffs one pair, not 0.1.0 too.
t.test('at 1.x the gate refuses a breaking edit without a major', async t => {
  const stable = readContract(join(projectRoot, 'contract', 'releases', '1.0.0.yaml')) as Json
  const { run, write } = gateCopy(t, ['1.0.0'])
  for (const version of ['1.0.1', '1.1.0']) {
    const copy = structuredClone(stable)
    delete copy.paths['/api/api-keys'].get
    copy.info.version = version
    write(copy, version)
    const refused = await run('check')
    t.equal(refused.code, 1, `${version} is refused`)
    t.match(refused.stdout, /FAIL 1 breaking change since 1\.0\.0 need info\.version 2\.0\.0 or later \(a major bump while the major version is 1\)/)
    t.match(refused.stdout, /GET \/api\/api-keys: operation removed/)
  }
})

// What 1.0 is, said once: under the first version whose major leaves 0, not under a later 1.x nor
// a 0.x minor; and in the changelog as committed.
t.test('the changelog says what 1.0 promises, under the first stable version only', async t => {
  const change: Change = { operation: 'GET /api/things', text: 'operation added', kind: 'non-breaking', section: 'added' }
  const entry = (version: string, previous: string) => ({ version, previous, released: true, changes: [change] })
  const promise = /The first stable version\. From here on the contract keeps the promise/
  t.match(renderChangelog([entry('1.0.0', '0.2.0')]), promise, '0.x → 1.0.0')
  t.notMatch(renderChangelog([entry('1.1.0', '1.0.0')]), promise, 'not under 1.1.0')
  t.notMatch(renderChangelog([entry('0.3.0', '0.2.0')]), promise, 'not under a 0.x minor')
  const committed = readFileSync(join(projectRoot, 'docs', 'contract-changelog.md'), 'utf8')
  t.match(committed, /## 1\.0\.0 \(released; compared with 0\.1\.0\)\n\nThe first stable version\./, 'docs/contract-changelog.md')
})

// Contract 2.0 opened the catalogues that grow (docs/contract-versioning.md, "Open and closed
// enums"): on the contract as released, a new scope, event type or audit action is an addition
// (a minor: 2.1.0, not 2.0.1); a new value of a closed enum (an invitation status), a known value
// taken out of an open one, or an open enum closed still needs 3.0.0.
const v2 = readContract(join(projectRoot, 'contract', 'releases', '2.0.0.yaml')) as Json
function editedV2 (edit: (d: Json) => void): Change[] {
  const copy = structuredClone(v2)
  edit(copy)
  return diffContracts(v2, copy)
}
const additions: Record<string, (d: Json) => void> = {
  'a new scope': d => { schemas(d).ApiKeyScope.enum.push('sso:read'); schemas(d).ApiKeyScope['x-enumDescriptions']['sso:read'] = 'See SSO.' },
  'a new event type': d => { schemas(d).EventType.enum.push('sso.connection_created') },
  'a new audit action': d => { schemas(d).AuditAction.enum.push('sso.connection_created') }
}
for (const [name, edit] of Object.entries(additions)) {
  t.test(`at 2.x: ${name} is a minor`, async t => {
    const changes = editedV2(edit)
    t.equal(listing(changes, 'breaking'), '', 'nothing breaking')
    t.ok(changes.some(c => c.kind === 'non-breaking' && /enum value `sso[.:]\w+` added/.test(c.text)), 'listed as an addition')
    t.same(versionProblems('2.0.0', '2.1.0', changes), [], '2.1.0 is accepted')
    t.match(versionProblems('2.0.0', '2.0.1', changes)[0], /need info\.version 2\.1\.0 or later/, '2.0.1 is refused')
  })
}
const stillBreaking: Record<string, { edit: (d: Json) => void, expect: RegExp }> = {
  'a new invitation status': {
    edit: d => { schemas(d).InvitationStatus.enum.push('bounced') },
    expect: /^GET \/api\/invitations: response 200 `items\[\]\.status`: enum value `bounced` added$/m
  },
  'a known scope taken out': {
    edit: d => { schemas(d).ApiKeyScope.enum = schemas(d).ApiKeyScope.enum.filter((s: string) => s !== 'events:read') },
    expect: /^GET \/api\/api-keys: response 200 `items\[\]\.scopes\[\]\.\(anyOf 0\)`: enum value `events:read` removed$/m
  },
  'an open enum closed': {
    edit: d => { schemas(d).AuditEvent.properties.action = { $ref: '#/components/schemas/AuditAction' } },
    expect: /^GET \/api\/audit-events: response 200 `items\[\]\.action`: enum closed \(only the known values\)$/m
  }
}
for (const [name, { edit, expect }] of Object.entries(stillBreaking)) {
  t.test(`at 2.x: ${name} needs 3.0.0`, async t => {
    const changes = editedV2(edit)
    t.match(listing(changes, 'breaking'), expect)
    t.match(versionProblems('2.0.0', '2.1.0', changes)[0], /need info\.version 3\.0\.0 or later/, 'a minor is refused')
    t.same(versionProblems('2.0.0', '3.0.0', changes), [], 'a major is accepted')
  })
}

t.test('the gate on a copy at 2.0.0: a new scope passes as 2.1.0 and fails as 2.0.1', async t => {
  const { root, write, run } = gateCopy(t, ['2.0.0'])
  const withScope = (version: string) => {
    const copy = structuredClone(v2)
    additions['a new scope']?.(copy)
    copy.info.version = version
    return copy
  }
  write(withScope('2.0.1'), '2.0.1')
  const refused = await run('check')
  t.equal(refused.code, 1)
  t.match(refused.stdout, /FAIL 0 breaking changes? since 2\.0\.0 .*2\.1\.0|need info\.version 2\.1\.0 or later/)
  write(withScope('2.1.0'), '2.1.0')
  t.equal((await run('changelog')).code, 0)
  const accepted = await run('check')
  t.equal(accepted.code, 0, accepted.stdout)
  t.match(readFileSync(join(root, 'docs', 'contract-changelog.md'), 'utf8'), /enum value `sso:read` added/)
})

t.test('the changelog says what changes for a client in 2.0, from contract/notes/2.0.0.md', async t => {
  const committed = readFileSync(join(projectRoot, 'docs', 'contract-changelog.md'), 'utf8')
  t.match(committed, /## 2\.0\.0 \(released; compared with 1\.0\.0\)\n\n### What changes for you in 2\.0\n/)
  const notes = readFileSync(join(projectRoot, 'contract', 'notes', '2.0.0.md'), 'utf8')
  t.ok(committed.includes(notes.trim()), 'the notes, as written')
})

// A webhook's payload is `allOf: [Event, {type, data: EventData + required}]`. api-smart-diff
// pairs the branches by position and, when EventData gained several fields at once, reported
// dozens of false "breaking" changes (seen with three). The gate compares each payload as one
// merged schema: new fields are additions, a field no longer promised is still breaking.
const v21 = readContract(join(projectRoot, 'contract', 'releases', '2.1.0.yaml')) as Json
t.test('at 2.x: EventData gaining fields is an addition; a payload field no longer required is not', async t => {
  const copy = structuredClone(v21)
  for (const name of ['streamId', 'destination', 'lagSeconds', 'pausedAt', 'failures', 'locale']) {
    schemas(copy).EventData.properties[name] = { type: 'string' }
  }
  const added = diffContracts(v21, copy)
  t.equal(listing(added, 'breaking'), '', 'six new fields: nothing breaking')
  t.ok(added.some(c => c.kind === 'non-breaking' && c.operation === 'webhook invitation.created' && /`data\.locale` added/.test(c.text)),
    'each webhook lists the new field')
  // A payload is what a receiver reads: a field it was promised and no longer is breaks it.
  const loosened = structuredClone(v21)
  const payload = loosened.webhooks['invitation.created'].post.requestBody.content['application/json'].schema
  payload.allOf[1].properties.data.required = payload.allOf[1].properties.data.required.filter((f: string) => f !== 'email')
  t.match(listing(diffContracts(v21, loosened), 'breaking'), /^webhook invitation\.created: payload `data`: `email` no longer required$/m)
})
