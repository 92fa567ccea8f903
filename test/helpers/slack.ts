import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { build, type BuildOptions, type SignedIn, type TestApp } from './build.js'
import { startFakeHttp, type FakeHttp, type FakeRequest } from './fake-http.js'
import { slackSignature } from '../../src/slack/signature.js'

// A loopback fake of the Slack Web API (oauth.v2.access, users.info, chat.postMessage, auth.revoke) and an
// app configured against it, with helpers to run the real install flow and to send signed events.

interface Teardown { teardown(fn: () => unknown): void }

export const TEAM_ID = 'T0TEAM01'
export const BOT_USER_ID = 'U0BOT001'
export const SIGNING_SECRET = 'test-signing-secret-0123456789abcdef'
export const CLIENT_SECRET = 'test-client-secret-fedcba9876543210'
export const APP_URL = 'http://app.example.test'

export interface SlackFake {
  fake: FakeHttp
  /** The bot token the fake hands out on the next install (fresh per test, so a scan means something). */
  botToken: string
  /** Slack user id → the e-mail users.info answers with. */
  emails: Map<string, string>
  /** The chat.postMessage calls received, in order. */
  posts(): SlackCall[]
  calls(method: string): FakeRequest[]
  /** The arguments of each call of a Web API method (form fields, JSON-valued ones decoded). */
  args(method: string): SlackCall[]
  /** What was POSTed to response_urls (responseUrl() makes one), in order. */
  responses(): Array<Record<string, unknown>>
  /** A response_url on the fake, as Slack puts in commands and interactions. */
  responseUrl(): string
  /** Delay (ms) for chat.postMessage answers. */
  postDelayMs: number
  /** Answer the next n chat.postMessage calls with 429 and Retry-After: 1. */
  rateLimitPosts: number
  /** Answer auth.revoke with HTTP 500 (Slack down) while set. */
  failRevoke: boolean
}

/** A Web API call's arguments, with the bot token it came with. */
interface SlackCall {
  channel: string
  text: string
  thread_ts?: string
  ts?: string
  blocks?: Array<Record<string, unknown>>
  view?: Record<string, unknown>
  user_id?: string
  trigger_id?: string
  authorization: string | undefined
  [key: string]: unknown
}

/** The SDK sends form fields, objects among them as JSON text; earlier clients sent JSON. */
function callArgs (r: FakeRequest): SlackCall {
  const fields: Record<string, unknown> = r.json !== null && typeof r.json === 'object'
    ? { ...(r.json as Record<string, unknown>) }
    : Object.fromEntries(new URLSearchParams(r.body))
  for (const k of ['blocks', 'view']) {
    if (typeof fields[k] === 'string') fields[k] = JSON.parse(fields[k])
  }
  return { ...fields, authorization: r.headers.authorization } as SlackCall
}

export async function startSlackFake (t: Teardown): Promise<SlackFake> {
  const fake = await startFakeHttp(t)
  const state: SlackFake = {
    fake,
    botToken: `xoxb-${randomBytes(12).toString('hex')}`,
    emails: new Map(),
    postDelayMs: 0,
    rateLimitPosts: 0,
    failRevoke: false,
    posts: () => state.args('chat.postMessage'),
    calls: method => fake.requests.filter(r => r.path === `/${method}`),
    args: method => state.calls(method).map(callArgs),
    responses: () => fake.requests.filter(r => r.path.startsWith('/respond/')).map(r => r.json as Record<string, unknown>),
    responseUrl: () => `${fake.url}/respond/${randomBytes(6).toString('hex')}`
  }
  // Tokens auth.revoke has revoked: Slack answers invalid_auth to them from then on.
  const revoked = new Set<string>()
  const authed = (req: FakeRequest) => !revoked.has(state.botToken) && (
    req.headers.authorization === `Bearer ${state.botToken}` ||
    new URLSearchParams(req.body).get('token') === state.botToken)
  const field = (req: FakeRequest, name: string) => {
    const fromJson = (req.json as Record<string, unknown> | null)?.[name]
    return typeof fromJson === 'string' ? fromJson : new URLSearchParams(req.body).get(name) ?? ''
  }
  let ts = 0
  fake.on('POST /oauth.v2.access', req => {
    const form = new URLSearchParams(req.body)
    if (form.get('client_secret') !== CLIENT_SECRET || form.get('code') !== 'good-code') {
      return {
        json: { ok: false, error: 'invalid_code' }
      }
    }
    // An install after the token was revoked gets a new one, as Slack would hand out.
    if (revoked.has(state.botToken)) state.botToken = `xoxb-${randomBytes(12).toString('hex')}`
    return {
      json: {
        ok: true,
        access_token: state.botToken,
        token_type: 'bot',
        scope: 'app_mentions:read,chat:write,users:read,users:read.email',
        bot_user_id: BOT_USER_ID,
        app_id: 'A0APP001',
        team: { id: TEAM_ID, name: 'Acme on Slack' },
        enterprise: null,
        authed_user: { id: 'U0INSTALLER' }
      }
    }
  })
  fake.on('POST /users.info', req => {
    if (!authed(req)) return { json: { ok: false, error: 'invalid_auth' } }
    const user = field(req, 'user')
    const email = state.emails.get(user)
    if (email === undefined) return { json: { ok: false, error: 'user_not_found' } }
    return { json: { ok: true, user: { id: user, profile: { email, real_name: 'Someone' } } } }
  })
  fake.on('POST /users.lookupByEmail', req => {
    if (!authed(req)) return { json: { ok: false, error: 'invalid_auth' } }
    const email = field(req, 'email').toLowerCase()
    const found = [...state.emails].find(([, e]) => e.toLowerCase() === email)
    if (found === undefined) return { json: { ok: false, error: 'users_not_found' } }
    return { json: { ok: true, user: { id: found[0], profile: { email: found[1] } } } }
  })
  fake.on('POST /chat.postMessage', req => {
    if (!authed(req)) return { json: { ok: false, error: 'invalid_auth' } }
    if (state.rateLimitPosts > 0) {
      state.rateLimitPosts--
      return { status: 429, headers: { 'retry-after': '1' }, json: { ok: false, error: 'ratelimited' } }
    }
    const channel = field(req, 'channel')
    // A message to a user id lands in the app's DM with them.
    const dm = channel.startsWith('U') ? `D${channel.slice(1)}` : channel
    return { json: { ok: true, channel: dm, ts: `1700000000.${String(++ts).padStart(6, '0')}` }, delayMs: state.postDelayMs }
  })
  for (const method of ['chat.update', 'views.open', 'views.publish']) {
    fake.on(`POST /${method}`, req => ({ json: authed(req) ? { ok: true } : { ok: false, error: 'invalid_auth' } }))
  }
  fake.on('POST /auth.revoke', req => {
    if (state.failRevoke) return { status: 500, json: { ok: false, error: 'internal_error' } }
    if (!authed(req)) return { json: { ok: false, error: 'invalid_auth' } }
    revoked.add(state.botToken)
    return { json: { ok: true, revoked: true } }
  })
  fake.on('POST /respond/*', () => ({ json: { ok: true } }))
  return state
}

export function slackEnv (fake: FakeHttp, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SLACK_CLIENT_ID: '1111.2222',
    SLACK_CLIENT_SECRET: CLIENT_SECRET,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: fake.url,
    SLACK_AUTHORIZE_URL: fake.url + '/oauth/v2/authorize',
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    APP_URL,
    ...extra
  }
}

export async function buildWithSlack (t: Teardown, opts: BuildOptions = {}): Promise<{ h: TestApp, slack: SlackFake }> {
  const slack = await startSlackFake(t)
  const h = await build(t, { ...opts, env: slackEnv(slack.fake, opts.env) })
  return { h, slack }
}

/** The Set-Cookie value for `name` in a response, or undefined. */
export function setCookie (res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie']
  return [raw ?? []].flat().map(String).find(c => c.startsWith(`${name}=`))
}

/** Step 1 of the install: returns the redirect, the state in it and the browser's state cookie. */
export async function startInstall (
  h: TestApp,
  admin: SignedIn
): Promise<{ res: LightMyRequestResponse, location: URL, state: string, cookie: string }> {
  const res = await h.inject({ method: 'GET', url: '/api/oauth/slack/install', headers: { cookie: admin.cookie } })
  const location = new URL(String(res.headers.location))
  const set = setCookie(res, 'slack_oauth_state') ?? ''
  return { res, location, state: location.searchParams.get('state') ?? '', cookie: set.split(';')[0] ?? '' }
}

/** The whole install, as a browser would do it; returns the callback's response. */
export async function install (h: TestApp, admin: SignedIn): Promise<LightMyRequestResponse> {
  const s = await startInstall(h, admin)
  return await h.inject({
    method: 'GET',
    url: `/api/oauth/slack/callback?code=good-code&state=${encodeURIComponent(s.state)}`,
    headers: { cookie: s.cookie }
  })
}

/** POST a Slack event, signed like Slack does unless told otherwise. */
export async function sendEvent (
  h: TestApp,
  body: unknown,
  o: {
    raw?: string,
    signBody?: string,
    secret?: string,
    skewSeconds?: number,
    headers?: Record<string, string | undefined>
  } = {}
): Promise<LightMyRequestResponse> {
  const payload = o.raw ?? JSON.stringify(body)
  const ts = String(Math.floor(h.clock.now().getTime() / 1000) + (o.skewSeconds ?? 0))
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-slack-request-timestamp': ts,
    'x-slack-signature': slackSignature(o.secret ?? SIGNING_SECRET, ts, o.signBody ?? payload)
  }
  for (const [k, v] of Object.entries(o.headers ?? {})) {
    if (v === undefined) delete headers[k]
    else headers[k] = v
  }
  return await h.inject({ method: 'POST', url: '/api/slack/events', headers, payload })
}

let seq = 0

/** An event_callback envelope around `event`, with a fresh event_id. */
export function envelope (
  event: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  seq++
  return {
    token: 'legacy-verification-token',
    team_id: TEAM_ID,
    api_app_id: 'A0APP001',
    type: 'event_callback',
    event_id: `Ev${Date.now()}${seq}`,
    event_time: 1700000000,
    event,
    ...extra
  }
}

/** An app_mention of the bot by `user` saying `text`. */
export function mention (user: string, text: string): Record<string, unknown> {
  return {
    type: 'app_mention',
    user,
    text: `<@${BOT_USER_ID}> ${text}`,
    ts: `1700000000.${String(++seq).padStart(6, '0')}`,
    channel: 'C0CHAN01',
    event_ts: '1700000000.000100'
  }
}

let commandSeq = 0

/** `/invite <text>` typed by `user`, posted as Slack posts a slash command (a signed form). */
export async function slashCommand (
  h: TestApp, slack: SlackFake, user: string, text: string
): Promise<LightMyRequestResponse> {
  const payload = new URLSearchParams({
    token: 'x',
    team_id: TEAM_ID,
    team_domain: 'acme',
    channel_id: 'C0CHAN01',
    channel_name: 'general',
    user_id: user,
    user_name: 'someone',
    command: '/invite',
    text,
    api_app_id: 'A0APP001',
    response_url: slack.responseUrl(),
    trigger_id: `13345224609.738474920.${++commandSeq}`
  }).toString()
  const ts = String(Math.floor(h.clock.now().getTime() / 1000))
  return await h.inject({
    method: 'POST',
    url: '/api/slack/commands',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(SIGNING_SECRET, ts, payload)
    },
    payload
  })
}
