import t from 'tap'
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey } from '../helpers/mcp.js'
import { assertLimited } from '../helpers/rate-limit.js'
import { loadBranding } from '../../src/workspaces/branding.js'

// The workspace's look through the API: what is refused and in which words (an SVG, however it is
// named or sent; an HTML file named .png; 5 MB; an accent colour below AA), what is stored, served
// under its hash with its headers, replaced and removed, and the audit line of each change.

const BRANDING = '/api/workspace/branding'
const LOGO = '/api/workspace/branding/logo'
const fixture = (name: string) => readFileSync(new URL(`../fixtures/branding/${name}`, import.meta.url))
const png = fixture('logo.png')
const jpeg = fixture('logo.jpg')
const webp = fixture('logo.webp')
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

async function putLogo (h: TestApp, who: SignedIn, body: Buffer, type: string) {
  const res = await h.inject({ method: 'PUT', url: LOGO, headers: { cookie: who.cookie, 'content-type': type }, payload: body })
  assertContract(t, 'PUT', LOGO, res)
  return res
}

t.test('a workspace with nothing set: its name, no logo, the default accent and sender name', async t => {
  const h = await build(t)
  const admin = await h.signIn({ workspaceName: 'Acme Robotics' })
  const res = await h.inject({ url: BRANDING, headers: { cookie: admin.cookie } })
  t.equal(res.statusCode, 200)
  assertContract(t, 'GET', BRANDING, res)
  t.same(res.json(), { displayName: null, accentColor: null, senderName: null, logo: null })
  t.same(await loadBranding(h.db, admin.workspaceId, h.config.appUrl, 'Invites <no-reply@example.com>'), {
    displayName: 'Acme Robotics', logoUrl: null, accentColor: null, senderName: 'Acme Robotics via Invites'
  })
  t.equal((await loadBranding(h.db, admin.workspaceId, h.config.appUrl)).senderName, 'Acme Robotics via Workspace')
})

t.test('the default sender name shows no address a workspace\'s name writes', async t => {
  const h = await build(t)
  const admin = await h.signIn({ workspaceName: 'IT <it@corp.test>' })
  t.equal((await loadBranding(h.db, admin.workspaceId, h.config.appUrl)).senderName, 'IT it@corp.test via Workspace',
    'no "<", ">" or quote: the From header has one address, the service\'s')
})

t.test('display name, accent colour and sender name: set, read, cleared, audited', async t => {
  const h = await build(t)
  const admin = await h.signIn({ workspaceName: 'Acme Robotics' })
  const patch = async (payload: Record<string, unknown>) => {
    const res = await h.inject({ method: 'PATCH', url: BRANDING, headers: { cookie: admin.cookie }, payload })
    assertContract(t, 'PATCH', BRANDING, res)
    return res
  }
  const set = await patch({ displayName: '  Acme  ', accentColor: '#1D4ED8', senderName: 'Acme People' })
  t.equal(set.statusCode, 200)
  t.same(set.json(), { displayName: 'Acme', accentColor: '#1d4ed8', senderName: 'Acme People', logo: null },
    'trimmed; the colour lowercase')
  t.same(await loadBranding(h.db, admin.workspaceId, h.config.appUrl), {
    displayName: 'Acme', logoUrl: null, accentColor: '#1d4ed8', senderName: 'Acme People'
  })
  const cleared = await patch({ senderName: null, accentColor: null })
  t.same(cleared.json(), { displayName: 'Acme', accentColor: null, senderName: null, logo: null })
  t.equal((await loadBranding(h.db, admin.workspaceId, h.config.appUrl)).senderName, 'Acme via Workspace',
    'the default sender name follows the display name')
  const same = await patch({ displayName: 'Acme' })
  t.equal(same.statusCode, 200, 'setting what is set: 200, nothing audited')

  const audit = await h.db.query<{ payload: unknown, actor_id: string }>(
    "SELECT payload, actor_id FROM audit_events WHERE action = 'workspace.branding_changed' ORDER BY id")
  t.same(audit.rows.map(r => r.payload), [
    {
      displayName: { from: null, to: 'Acme' },
      accentColor: { from: null, to: '#1d4ed8' },
      senderName: { from: null, to: 'Acme People' }
    },
    { accentColor: { from: '#1d4ed8', to: null }, senderName: { from: 'Acme People', to: null } }
  ])
  t.equal(audit.rows[0]?.actor_id, admin.userId)

  for (const [payload, field] of [
    [{ displayName: '   ' }, 'displayName'],
    [{ displayName: 'a\u0007b' }, 'displayName'],
    [{ displayName: 'x'.repeat(101) }, 'displayName'],
    [{ accentColor: 'yellow' }, 'accentColor'],
    [{ accentColor: '#fff' }, 'accentColor'],
    [{ senderName: 'Acme <evil@example.com>' }, 'senderName'],
    [{ logo: 'x' }, 'logo'],
    [{}, '']
  ] as const) {
    const res = await patch(payload)
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().code, 'VALIDATION_FAILED')
    t.equal(res.json().details.errors[0].field, field)
  }
})

t.test('#ffff00 is refused with the contrast it reached', async t => {
  const h = await build(t)
  const admin = await h.signIn()
  const res = await h.inject({
    method: 'PATCH', url: BRANDING, headers: { cookie: admin.cookie }, payload: { accentColor: '#ffff00', displayName: 'X' }
  })
  t.equal(res.statusCode, 422)
  assertContract(t, 'PATCH', BRANDING, res)
  t.same(res.json(), {
    message: '#ffff00 reaches 1.07:1 against white; links and buttons need at least 4.5:1',
    code: 'ACCENT_COLOR_CONTRAST_TOO_LOW',
    details: {
      in: 'body',
      field: 'accentColor',
      contrast: { accentColor: '#ffff00', against: '#ffffff', ratio: 1.07, required: 4.5 }
    }
  })
  const after = await h.inject({ url: BRANDING, headers: { cookie: admin.cookie } })
  t.equal(after.json().displayName, null, 'nothing of the request was stored')
  const borderline = await h.inject({
    method: 'PATCH', url: BRANDING, headers: { cookie: admin.cookie }, payload: { accentColor: '#777777' }
  })
  t.equal(borderline.json().message, '#777777 reaches 4.47:1 against white; links and buttons need at least 4.5:1')
  const passes = await h.inject({
    method: 'PATCH', url: BRANDING, headers: { cookie: admin.cookie }, payload: { accentColor: '#767676' }
  })
  t.equal(passes.statusCode, 200, '#767676 (4.54:1) passes')
})

t.test('a logo that is not a PNG, JPEG or WebP is refused in words', async t => {
  const h = await build(t)
  const admin = await h.signIn()
  const svg = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
  const html = Buffer.from('<!doctype html><html><body>logo.png</body></html>')
  const refusals: Array<[string, Buffer, string, number, string, string]> = [
    ['an SVG sent as image/svg+xml', svg, 'image/svg+xml', 422, 'LOGO_NOT_ACCEPTED',
      'This is an SVG image; upload a PNG, JPEG or WebP'],
    ['an SVG named logo.png, sent as image/png', svg, 'image/png', 422, 'LOGO_NOT_ACCEPTED',
      'This is an SVG image; upload a PNG, JPEG or WebP'],
    ['an HTML file named logo.png', html, 'image/png', 422, 'LOGO_NOT_ACCEPTED',
      'This file is not a PNG, JPEG or WebP image'],
    ['a JPEG sent as image/png', jpeg, 'image/png', 422, 'LOGO_NOT_ACCEPTED',
      'This file is a JPEG image, not image/png: send it as image/jpeg'],
    ['a PNG sent as text/html', png, 'text/html', 415, 'LOGO_TYPE_UNSUPPORTED',
      'Send a logo as image/png, image/jpeg or image/webp, not text/html'],
    ['a PNG sent as application/octet-stream', png, 'application/octet-stream', 415, 'LOGO_TYPE_UNSUPPORTED',
      'Send a logo as image/png, image/jpeg or image/webp, not application/octet-stream'],
    ['JSON', Buffer.from('{"logo":"x"}'), 'application/json', 415, 'LOGO_TYPE_UNSUPPORTED',
      'Send a logo as image/png, image/jpeg or image/webp, not application/json']
  ]
  for (const [what, body, type, status, code, message] of refusals) {
    const res = await putLogo(h, admin, body, type)
    t.equal(res.statusCode, status, what)
    t.match(res.json(), { code, message }, what)
  }
  t.same((await putLogo(h, admin, svg, 'image/png')).json().details, { reason: 'svg' })
  t.same((await putLogo(h, admin, jpeg, 'image/png')).json().details, { reason: 'type_mismatch', detectedType: 'image/jpeg' })
  const look = await h.inject({ url: BRANDING, headers: { cookie: admin.cookie } })
  t.equal(look.json().logo, null, 'nothing stored')
  // Another operation's JSON body is not an image's business: still application/json only.
  const elsewhere = await h.inject({
    method: 'PATCH', url: BRANDING, headers: { cookie: admin.cookie, 'content-type': 'image/png' }, payload: png
  })
  t.equal(elsewhere.statusCode, 415)
  t.equal(elsewhere.json().code, 'UNSUPPORTED_MEDIA_TYPE')
})

t.test('5 MB is refused with the limit in words, before it is read whole', async t => {
  const h = await build(t)
  const admin = await h.signIn()
  const big = Buffer.concat([png.subarray(0, 33), Buffer.alloc(5 * 1024 * 1024)])
  const res = await putLogo(h, admin, big, 'image/png')
  t.equal(res.statusCode, 413)
  t.same(res.json(), { message: 'The request body is larger than 204800 bytes', code: 'PAYLOAD_TOO_LARGE' })
  const limit = await putLogo(h, admin, Buffer.concat([png, Buffer.alloc(204800 - png.length + 1)]), 'image/png')
  t.equal(limit.statusCode, 413, 'one byte over 200 kB')

  // Over a real connection: the answer comes after the headers and 64 kB of the 5 MB.
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as AddressInfo
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`PUT ${LOGO} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${admin.cookie}\r\n` +
        `Content-Type: image/png\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n`)
      socket.write(Buffer.alloc(64 * 1024))
    })
    let text = ''
    socket.on('data', d => {
      text += d.toString('latin1')
      if (text.includes('PAYLOAD_TOO_LARGE')) { socket.destroy(); resolve(text) }
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(text))
  })
  t.match(answer, /^HTTP\/1\.1 413 /, 'answered 413 with the rest never sent')
  t.match(answer, /larger than 204800 bytes/)
})

t.test('PNG, JPEG and WebP: stored, served under their hash, replaced, removed', async t => {
  const h = await build(t)
  const admin = await h.signIn({ workspaceName: 'Acme' })
  const served: string[] = []
  for (const [bytes, type, ext] of [[png, 'image/png', 'png'], [jpeg, 'image/jpeg', 'jpg'], [webp, 'image/webp', 'webp']] as const) {
    const res = await putLogo(h, admin, bytes, type)
    t.equal(res.statusCode, 200, type)
    const path = `/branding/logos/${sha(bytes)}.${ext}`
    t.same(res.json().logo, { url: `${h.config.appUrl}${path}`, sha256: sha(bytes), mediaType: type, size: bytes.length })
    t.equal((await loadBranding(h.db, admin.workspaceId, h.config.appUrl)).logoUrl, `${h.config.appUrl}${path}`)
    const got = await h.inject({ url: path })
    t.equal(got.statusCode, 200)
    assertContract(t, 'GET', path, got)
    t.equal(got.headers['content-type'], type)
    t.equal(got.headers['cache-control'], 'public, max-age=31536000, immutable')
    t.equal(got.headers['x-content-type-options'], 'nosniff')
    t.equal(got.headers['cross-origin-resource-policy'], 'cross-origin', 'webmail shows it from its own origin')
    t.ok(got.rawPayload.equals(bytes), 'the bytes as uploaded')
    served.push(path)
  }
  // Replaced: only the current logo is served; the old names are 404 (a removed logo is gone).
  for (const old of served.slice(0, 2)) {
    const res = await h.inject({ url: old })
    t.equal(res.statusCode, 404, `replaced: ${old}`)
    assertContract(t, 'GET', old, res)
  }
  const wrongExt = await h.inject({ url: served[2]?.replace('.webp', '.png') ?? '' })
  t.equal(wrongExt.statusCode, 404, 'one name per logo: its own extension')
  const bad = await h.inject({ url: '/branding/logos/..%2F..%2Fetc.png' })
  t.equal(bad.statusCode, 400)
  assertContract(t, 'GET', '/branding/logos/x.png', bad)

  const removed = await h.inject({ method: 'DELETE', url: LOGO, headers: { cookie: admin.cookie } })
  t.equal(removed.statusCode, 200)
  assertContract(t, 'DELETE', LOGO, removed)
  t.equal(removed.json().logo, null)
  t.equal((await h.inject({ url: served[2] ?? '' })).statusCode, 404, 'removed: no longer served')
  const again = await h.inject({ method: 'DELETE', url: LOGO, headers: { cookie: admin.cookie } })
  t.equal(again.statusCode, 200, 'removing nothing: 200')

  const audit = await h.db.query<{ payload: { logo: unknown } }>(
    "SELECT payload FROM audit_events WHERE action = 'workspace.branding_changed' ORDER BY id")
  t.same(audit.rows.map(r => r.payload), [
    { logo: { from: null, to: sha(png) } },
    { logo: { from: sha(png), to: sha(jpeg) } },
    { logo: { from: sha(jpeg), to: sha(webp) } },
    { logo: { from: sha(webp), to: null } }
  ], 'each change once, the logos by their hashes; removing nothing is not a change')
})

t.test('who may: admins and keys with workspace scopes; members and strangers not', async t => {
  const h = await build(t)
  const admin = await h.signIn()
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const key = (await createApiKey(h, admin, 'writer', ['workspace:read', 'workspace:write'])).secret
  const reader = (await createApiKey(h, admin, 'reader', ['workspace:read'])).secret

  const byKey = await h.inject({
    method: 'PUT', url: LOGO, headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' }, payload: png
  })
  t.equal(byKey.statusCode, 200, 'a key with workspace:write uploads')
  const readByKey = await h.inject({ url: BRANDING, headers: { authorization: `Bearer ${reader}` } })
  t.equal(readByKey.statusCode, 200, 'workspace:read reads')
  const writeByReader = await h.inject({
    method: 'PATCH', url: BRANDING, headers: { authorization: `Bearer ${reader}` }, payload: { displayName: 'X' }
  })
  t.equal(writeByReader.statusCode, 403)
  assertContract(t, 'PATCH', BRANDING, writeByReader)
  for (const [method, url] of [['GET', BRANDING], ['PATCH', BRANDING], ['PUT', LOGO], ['DELETE', LOGO]] as const) {
    const payload = method === 'PATCH' ? { displayName: 'X' } : method === 'PUT' ? png : undefined
    const body = payload !== undefined ? { payload } : {}
    const type = method === 'PUT' ? { 'content-type': 'image/png' } : {}
    const asMember = await h.inject({ method, url, headers: { cookie: member.cookie, ...type }, ...body })
    t.equal(asMember.statusCode, 403, `${method} ${url}: a member`)
    assertContract(t, method, url, asMember)
    const anonymous = await h.inject({ method, url, headers: type, ...body })
    t.equal(anonymous.statusCode, 401, `${method} ${url}: nobody`)
    assertContract(t, method, url, anonymous)
  }
})

t.test('no file: 400; API keys are limited per key', async t => {
  const h = await build(t, { env: { API_KEY_REST_RATE_LIMIT_PER_MINUTE: '2' } })
  const admin = await h.signIn()
  const empty = await h.inject({ method: 'PUT', url: LOGO, headers: { cookie: admin.cookie } })
  t.equal(empty.statusCode, 400)
  assertContract(t, 'PUT', LOGO, empty)
  t.equal(empty.json().code, 'VALIDATION_FAILED')

  const key = (await createApiKey(h, admin, 'reader', ['workspace:read'])).secret
  for (let i = 0; i < 2; i++) {
    t.equal((await h.inject({ url: BRANDING, headers: { authorization: `Bearer ${key}` } })).statusCode, 200)
  }
  assertLimited(t, await h.inject({ url: BRANDING, headers: { authorization: `Bearer ${key}` } }), 'GET', BRANDING, 2)
})
