import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { build, type BuildOptions, type SignedIn, type TestApp } from './build.js'
import { startFakeHttp, type FakeHttp, type FakeRequest } from './fake-http.js'
import { slackSignature } from '../../src/slack/signature.js'

// A loopback fake of the Slack Web API (oauth.v2.access, users.info, chat.postMessage) and an
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
  posts(): Array<{ channel: string, text: string, thread_ts?: string, authorization: string | undefined }>
  calls(method: string): FakeRequest[]
  /** Delay (ms) for chat.postMessage answers. */
  postDelayMs: number
}

export async function startSlackFake (t: Teardown): Promise<SlackFake> {
  const fake = await startFakeHttp(t)
  const state: SlackFake = {
    fake,
    botToken: `xoxb-${randomBytes(12).toString('hex')}`,
    emails: new Map(),
    postDelayMs: 0,
    posts: () => fake.requests.filter(r => r.path === '/chat.postMessage').map(r => ({
      ...(r.json as { channel: string, text: string, thread_ts?: string }),
      authorization: r.headers.authorization
    })),
    calls: method => fake.requests.filter(r => r.path === `/${method}`)
  }
  fake.on('POST /oauth.v2.access', req => {
    const form = new URLSearchParams(req.body)
    if (form.get('client_secret') !== CLIENT_SECRET || form.get('code') !== 'good-code') {
      return {
        json: { ok: false, error: 'invalid_code' }
      }
    }
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
    if (req.headers.authorization !== `Bearer ${state.botToken}`) return { json: { ok: false, error: 'invalid_auth' } }
    const user = new URLSearchParams(req.body).get('user') ?? ''
    const email = state.emails.get(user)
    if (email === undefined) return { json: { ok: false, error: 'user_not_found' } }
    return { json: { ok: true, user: { id: user, profile: { email, real_name: 'Someone' } } } }
  })
  fake.on('POST /chat.postMessage', req => {
    if (req.headers.authorization !== `Bearer ${state.botToken}`) return { json: { ok: false, error: 'invalid_auth' } }
    return { json: { ok: true, ts: '1700000000.000200' }, delayMs: state.postDelayMs }
  })
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
