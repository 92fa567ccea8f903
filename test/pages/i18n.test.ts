import t from 'tap'
import { DEFAULT_ACCENT } from '../../src/lib/html.js'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { hashToken } from '../../src/lib/tokens.js'
import { negotiateLocale, parseAcceptLanguage } from '../../src/i18n/negotiate.js'
import { PSEUDO_LOCALE } from '../../src/i18n/locales.js'
import { testSignInPage } from '../../src/sso/pages.js'

// Issue 54, item 2: a page before sign-in answers in its reader's language — the link's (the
// invitation's, the invite link's, the sign-in link's account's), else Accept-Language, else the
// workspace's default, else English — with <html lang dir>, Content-Language and Vary; in the
// pseudo-locale no English word escapes the catalogue; the workspace's look where it is known.

const DAY = 86_400_000

t.test('Accept-Language: q-values, wildcards and malformed entries', async t => {
  t.same(parseAcceptLanguage('de-CH, fr;q=0.8'), ['de-CH', 'fr'])
  t.same(parseAcceptLanguage('fr;q=0.5, ja, *;q=0.9, de;q=0.7'), ['ja', 'de', 'fr'], 'by q, the wildcard names nothing')
  t.same(parseAcceptLanguage('es;q=0, ar'), ['ar'], 'q=0: not acceptable')
  t.same(parseAcceptLanguage('en;q=2, de;q=abc, ja;q=0.3, <script>, fr'), ['fr', 'ja'], 'malformed entries skipped')
  t.same(parseAcceptLanguage('de;q=0.5, fr;q=0.5'), ['de', 'fr'], 'a tie keeps the header\'s order')
  t.same(parseAcceptLanguage(undefined), [])
  t.same(parseAcceptLanguage('x'.repeat(3000)), [], 'an oversized header is not read')
  t.equal(negotiateLocale({ acceptLanguage: 'de-CH, fr;q=0.8' }), 'de', 'de-CH → de')
  t.equal(negotiateLocale({ acceptLanguage: 'pt-BR, zh;q=0.9, fr;q=0.1' }), 'fr', 'the first one with a catalogue')
  t.equal(negotiateLocale({ link: 'fr', acceptLanguage: 'de' }), 'fr', 'the link first')
  t.equal(negotiateLocale({ link: 'pt', acceptLanguage: 'de' }), 'de', 'a link language without a catalogue: the next source')
  t.equal(negotiateLocale({ acceptLanguage: 'pt', workspace: 'ja' }), 'ja', 'then the workspace')
  t.equal(negotiateLocale({ acceptLanguage: '*' }), 'en', 'then English')
})

/** An admin's workspace with an invitation, an invite link, a sign-in link and a domain join link (our tokens). */
async function links (h: TestApp): Promise<{ workspaceId: string, userId: string }> {
  const admin = await h.signIn({ role: 'admin', email: 'ada@acme.test', workspaceName: 'Acme Robotics' })
  const now = h.clock.now()
  const expires = new Date(now.getTime() + DAY)
  await h.db.query(
    `INSERT INTO invitations (workspace_id, email, role, token_hash, expires_at, created_at, updated_at, locale)
     VALUES ($1, 'bea@acme.test', 'member', $2, $3, $4, $4, 'fr'), ($1, 'cy@acme.test', 'member', $5, $3, $4, $4, NULL)`,
    [admin.workspaceId, hashToken('invitation-fr'), expires, now, hashToken('invitation-none')])
  await h.db.query(
    `INSERT INTO invite_links (workspace_id, code_hash, role, expires_at, created_at, updated_at, locale)
     VALUES ($1, $2, 'member', $3, $4, $4, 'ja')`, [admin.workspaceId, hashToken('linkja'), expires, now])
  await h.db.query(
    'INSERT INTO login_tokens (user_id, token_hash, expires_at, created_at) VALUES ($1, $2, $3, $4)',
    [admin.userId, hashToken('login-ada'), expires, now])
  const domain = await h.db.query<{ id: string }>(
    `INSERT INTO workspace_domains (workspace_id, domain, status, policy, token, verified_at, created_at, updated_at)
     VALUES ($1, 'acme.test', 'verified', 'auto_join', $2, $3, $3, $3) RETURNING id`,
    [admin.workspaceId, 'v'.repeat(43), now])
  await h.db.query(
    'INSERT INTO domain_join_tokens (token_hash, domain_id, email, expires_at, created_at) VALUES ($1, $2, \'dee@acme.test\', $3, $4)',
    [hashToken('domain-join'), domain.rows[0]?.id, expires, now])
  return { workspaceId: admin.workspaceId, userId: admin.userId }
}

const langOf = (html: string) => /<html lang="([^"]+)" dir="(ltr|rtl)">/.exec(html)?.slice(1) ?? []

t.test('pages in the reader\'s language', async t => {
  const h = await build(t)
  const { workspaceId, userId } = await links(h)
  const get = async (url: string, acceptLanguage?: string) => {
    const res = await h.inject({ method: 'GET', url, headers: acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage } })
    assertContract(t, 'GET', url, res)
    return res
  }

  await t.test('/login with Accept-Language: de-CH, fr;q=0.8 answers in German', async t => {
    const res = await get('/login', 'de-CH, fr;q=0.8')
    t.equal(res.statusCode, 200)
    t.same(langOf(res.body), ['de', 'ltr'])
    t.equal(res.headers['content-language'], 'de')
    t.match(String(res.headers.vary), /Accept-Language/)
    t.match(res.body, '<title>Anmelden</title>')
    t.match(res.body, '>Weiter</button>')
    t.notMatch(res.body, /E-mail me a sign-in link/, 'no English word')
  })

  await t.test('without Accept-Language, English (the existing pages\' words)', async t => {
    const res = await get('/login')
    t.same(langOf(res.body), ['en', 'ltr'])
    t.equal(res.headers['content-language'], 'en')
    t.match(res.body, '<title>Sign in</title>')
    t.match(res.body, `:root{--accent:${DEFAULT_ACCENT}}`, 'no workspace\'s look: the service\'s accent, the e-mails\' one')
  })

  await t.test('the console\'s page, before the console knows its reader: the browser\'s language', async t => {
    const res = await get('/console/members', 'ja, en;q=0.5')
    t.equal(res.statusCode, 200)
    t.same(langOf(res.body), ['ja', 'ltr'])
    t.equal(res.headers['content-language'], 'ja')
    t.match(res.body, '<title>メンバー</title>')
    t.match(res.body, '>メンバーを読み込んでいます…</p>')
    const arabic = await get('/console/nowhere', 'ar')
    t.equal(arabic.statusCode, 404)
    t.same(langOf(arabic.body), ['ar', 'rtl'], 'a screen that is not there, right to left')
    const english = await get('/')
    t.match(english.body, '<title>Workspace</title>')
    t.match(english.body, '>Loading Workspace…</p>')
  })

  await t.test('a link made in French overrides Accept-Language', async t => {
    const res = await get('/signup?token=invitation-fr', 'de-CH, fr;q=0.8')
    t.same(langOf(res.body), ['fr', 'ltr'], 'the invitation\'s language')
    t.equal(res.headers['content-language'], 'fr')
    t.match(res.body, 'Accepter votre invitation')
    const none = await get('/signup?token=invitation-none', 'de-CH, fr;q=0.8')
    t.same(langOf(none.body), ['de', 'ltr'], 'an invitation made in no language: the browser\'s')
    const forged = await get('/signup?token=nobody', 'es')
    t.same(langOf(forged.body), ['es', 'ltr'], 'a token that names nothing: the browser\'s')
  })

  await t.test('an invite link made in Japanese; a sign-in link in its account\'s language', async t => {
    const join = await get('/join/linkja', 'de')
    t.same(langOf(join.body), ['ja', 'ltr'])
    t.match(join.body, '<title>Acme Robotics に参加</title>')
    await h.db.query('UPDATE users SET locale = $2 WHERE id = $1', [userId, 'fr-FR'])
    const login = await get('/login?token=login-ada', 'de')
    t.same(langOf(login.body), ['fr', 'ltr'], 'the member chose French')
  })

  await t.test('the workspace\'s default when the browser names nothing the service has', async t => {
    await h.db.query('UPDATE workspaces SET locale = $2 WHERE id = $1', [workspaceId, 'es'])
    const page = await get('/domain-join?token=domain-join', 'pt-BR')
    t.same(langOf(page.body), ['es', 'ltr'])
    const browser = await get('/domain-join?token=domain-join', 'ar')
    t.same(langOf(browser.body), ['ar', 'rtl'], 'the browser before the workspace')
    const unknown = await get('/join/unknown-code', 'pt')
    t.equal(unknown.statusCode, 404)
    t.same(langOf(unknown.body), ['en', 'ltr'], 'no workspace known: English')
  })

  await t.test('Arabic is laid out right to left', async t => {
    for (const url of ['/login', '/signup', '/setup', '/domain-join', '/join/linkja?confirm=x']) {
      const res = await get(url, 'ar-EG')
      t.same(langOf(res.body), url.startsWith('/join') ? ['ja', 'ltr'] : ['ar', 'rtl'], url)
    }
    const sso = await h.inject({
      method: 'GET', url: '/api/oauth/sso?email=x@nowhere.test', headers: { accept: 'text/html', 'accept-language': 'ar' }
    })
    t.same(langOf(sso.body), ['ar', 'rtl'], 'the SSO refusal page too')
    t.equal(sso.headers['content-language'], 'ar')
    t.match(String(sso.headers.vary), /Accept, Accept-Language/)
  })

  await t.test('the workspace\'s look: its name, logo and accent colour, under the CSP', async t => {
    await h.db.query(
      `INSERT INTO workspace_branding (workspace_id, display_name, accent_color, logo, logo_sha256, logo_media_type, updated_at)
       VALUES ($1, 'Acme <R&D>', '#7a1f5c', $2, $3, 'image/png', now())`,
      [workspaceId, Buffer.from('png'), 'a'.repeat(64)])
    const res = await get('/signup?token=invitation-fr')
    t.match(res.body, '<header class="brand"><img src="/branding/logos/' + 'a'.repeat(64) + '.png" alt="Logo de Acme &lt;R&amp;D&gt;">' +
      '<span>Acme &lt;R&amp;D&gt;</span></header>', 'the logo (alt in the page\'s language) and the name, escaped')
    const nonce = /style-src 'nonce-([^']+)'/.exec(String(res.headers['content-security-policy']))?.[1]
    t.match(res.body, `<style nonce="${nonce ?? ''}">`, 'the accent colour in the nonce\'d style')
    t.match(res.body, ':root{--accent:#7a1f5c}')
    t.notMatch(res.body, / style="/, 'no inline style attribute')
    const plain = await get('/login')
    t.notMatch(plain.body, /class="brand"|#7a1f5c/, 'a page that knows no workspace shows none')
  })
})

/**
 * What is left of a page's words (its title, the body's text and alt texts, its script's words)
 * once every ⟦message⟧ (markup inside one included) and the data shown as it is (names,
 * addresses) are taken out: the words that escaped the catalogue.
 */
function escaped (html: string, data: string[]): string[] {
  const meta = /<meta name="page-words" content="([^"]*)">/.exec(html)?.[1]
  const words = meta === undefined
    ? []
    : Object.values((JSON.parse(meta.replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>').replace(/&amp;/g, '&')) as { words: Record<string, string> }).words)
  const title = /<title>[^<]*<\/title>/.exec(html)?.[0] ?? ''
  const body = (title + html.slice(html.indexOf('<body>'))).replace(/<script[^>]*><\/script>/g, '')
    .replace(/⟦[^⟧]*⟧/g, '')
  const alts = [...body.matchAll(/ alt="([^"]*)"/g)].map(m => m[1] ?? '')
  const text = body.replace(/<[^>]+>/g, '\n').split('\n')
  return [...alts, ...text, ...words.map(w => w.replace(/⟦[^⟧]*⟧/g, ''))]
    .map(w => data.reduce((s, d) => s.split(d).join(''), w).trim())
    .filter(w => /[A-Za-z]/.test(w))
}

t.test('the pseudo-locale: no English word escapes the catalogue on any page', async t => {
  const h = await build(t)
  const setup = await h.inject({ method: 'GET', url: '/setup?token=x', headers: { 'accept-language': PSEUDO_LOCALE } })
  t.same(langOf(setup.body), ['en-XA', 'ltr'])
  t.same(escaped(setup.body, []), [], '/setup (before any workspace)')
  await links(h)
  const data = ['Acme Robotics', 'OpenID Connect', 'conn_1', 'https://idp.test', 'sub-1', 'ada@acme.test', 'department']
  for (const url of [
    '/login', '/login?token=login-ada', '/signup?token=invitation-none', '/setup', '/join/linkja',
    '/join/unknown-code', '/domain-join?token=domain-join', '/api/oauth/sso?email=x@nowhere.test'
  ]) {
    // The invite link was made in Japanese: the pseudo-locale is asked of the others.
    await h.db.query('UPDATE invite_links SET locale = NULL')
    const res = await h.inject({ method: 'GET', url, headers: { accept: 'text/html', 'accept-language': PSEUDO_LOCALE } })
    t.equal(res.headers['content-language'], PSEUDO_LOCALE, url)
    t.same(escaped(res.body, data), [], `${url}: every word from the catalogue`)
  }
  const test = testSignInPage({
    connectionId: 'conn_1',
    protocol: 'oidc',
    issuer: 'https://idp.test',
    subject: 'sub-1',
    email: null,
    emailVerified: false,
    claims: { department: ['R&D'] }
  }, { locale: PSEUDO_LOCALE })
  t.same(escaped(test.html, [...data, 'R&amp;D']), [], 'the SSO test sign-in page')
})
