import type { Logger as SlackLogger, WebClient } from '@slack/web-api'
import type { Logger } from '../logger.js'

// The Slack Web API methods the service calls, through Slack's own SDK (@slack/web-api): it
// retries failed calls and waits out a 429's Retry-After before retrying. SLACK_API_URL points
// it elsewhere (tests use a loopback fake). Calls are bounded: a few retries, a per-request
// timeout. Errors name the method and Slack's error code only: never a token, never a body.
// The SDK is loaded by the first call, not at start-up (most installations never call Slack).

type Sdk = typeof import('@slack/web-api')
let sdk: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => (sdk ??= import('@slack/web-api'))

export class SlackApiError extends Error {
  override name = 'SlackApiError'
  constructor (readonly method: string, readonly slackError: string) {
    super(`Slack ${method} failed: ${slackError}`)
  }
}

export interface OAuthAccess {
  accessToken: string
  scope: string
  botUserId: string | null
  appId: string | null
  teamId: string
  teamName: string | null
}

/** A Block Kit block or view, as plain JSON (built in blocks.ts). */
type Block = Record<string, unknown>

interface SlackMessage { channel: string, text: string, blocks?: Block[], threadTs?: string }

export interface SlackWebApi {
  oauthV2Access(input: {
    clientId: string,
    clientSecret: string,
    code: string,
    redirectUri: string
  }): Promise<OAuthAccess>
  /** The e-mail on the user's Slack profile (needs users:read.email), or null when hidden. */
  userEmail(token: string, userId: string): Promise<string | null>
  /** The Slack user with this e-mail (users.lookupByEmail), or null when there is none. */
  userIdByEmail(token: string, email: string): Promise<string | null>
  /** Posts a message; a user id as channel is a direct message from the app. */
  postMessage(token: string, message: SlackMessage): Promise<{ channel: string, ts: string }>
  updateMessage(token: string, message: { channel: string, ts: string, text: string, blocks: Block[] }): Promise<void>
  openView(token: string, triggerId: string, view: Block): Promise<void>
  publishView(token: string, userId: string, view: Block): Promise<void>
  /** Revokes the token (auth.revoke): the app's bot token, when an admin uninstalls it from the service. */
  authRevoke(token: string): Promise<void>
  /** Answers through an interaction's response_url (not a Web API method: no token, no retries). */
  respond(responseUrl: string, body: Record<string, unknown>): Promise<void>
}

type Json = Record<string, unknown>

const str = (v: unknown): string | null => typeof v === 'string' && v !== '' ? v : null

/**
 * The SDK's logger, onto ours (the SDK would otherwise write to the console). Its debug and info
 * lines are dropped: they print each call's arguments, client secret and tokens included.
 */
function sdkLogger (LogLevel: Sdk['LogLevel'], log: Logger): SlackLogger {
  const text = (msg: unknown[]) => msg.map(String).join(' ')
  return {
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => { log.warn({ slackSdk: true }, text(msg)) },
    error: (...msg: unknown[]) => { log.warn({ slackSdk: true }, text(msg)) },
    setLevel: () => {},
    getLevel: () => LogLevel.DEBUG,
    setName: () => {}
  }
}

/** The Slack error code of a failed SDK call (its ErrorCode given) or fetch, never its body. */
function slackErrorOf (err: unknown, ErrorCode?: Sdk['ErrorCode']): string {
  const e = err as { code?: string, data?: { error?: unknown }, statusCode?: number, retryAfter?: number }
  if (ErrorCode === undefined) return (err as Error).name === 'TimeoutError' ? 'timed out' : 'request failed'
  switch (e.code) {
    case ErrorCode.PlatformError: return str(e.data?.error) ?? 'unknown_error'
    case ErrorCode.HTTPError: return `HTTP ${e.statusCode ?? '?'}`
    case ErrorCode.RateLimitedError: return `rate limited (retry after ${e.retryAfter ?? '?'} s)`
    case ErrorCode.RequestError: return 'request failed'
    default: return (err as Error).name === 'TimeoutError' ? 'timed out' : 'request failed'
  }
}

export function createSlackWebApi (
  opts: { apiUrl: string, log: Logger, timeoutMs?: number, retries?: number }
): SlackWebApi {
  const timeoutMs = opts.timeoutMs ?? 5000
  const clientWith = ({ WebClient, LogLevel }: Sdk, retries: number): WebClient => new WebClient(undefined, {
    // The SDK joins base and method without a separator.
    slackApiUrl: opts.apiUrl.endsWith('/') ? opts.apiUrl : `${opts.apiUrl}/`,
    timeout: timeoutMs,
    retryConfig: { retries, factor: 2, minTimeout: 200, maxTimeout: 2000 },
    rejectRateLimitedCalls: false,
    allowAbsoluteUrls: false,
    logger: sdkLogger(LogLevel, opts.log)
  })
  let clients: Promise<{ sdk: Sdk, retrying: WebClient, once: WebClient }> | undefined
  const loadClients = () => (clients ??= loadSdk().then(sdk => ({
    sdk,
    // Work after the acknowledgement: a few quick retries, not the SDK's default of half an hour.
    retrying: clientWith(sdk, opts.retries ?? 2),
    // The code exchange: a browser waits, and a code is single use, so a retry would not help.
    once: clientWith(sdk, 0)
  })))

  async function call (method: string, token: string | undefined, args: Json): Promise<Json> {
    const { sdk, retrying, once } = await loadClients()
    try {
      const client = token === undefined ? once : retrying
      return await client.apiCall(method, { ...args, ...(token !== undefined ? { token } : {}) }) as unknown as Json
    } catch (err) {
      throw new SlackApiError(method, slackErrorOf(err, sdk.ErrorCode))
    }
  }

  return {
    async oauthV2Access (input) {
      const data = await call('oauth.v2.access', undefined, {
        client_id: input.clientId,
        client_secret: input.clientSecret,
        code: input.code,
        redirect_uri: input.redirectUri
      })
      const team = (data.team ?? {}) as Json
      const accessToken = str(data.access_token)
      const teamId = str(team.id)
      // Only a bot token for a team is an installation we can use.
      if (accessToken === null || teamId === null || (data.token_type !== undefined && data.token_type !== 'bot')) {
        throw new SlackApiError('oauth.v2.access', 'the answer carries no bot token for a team')
      }
      return {
        accessToken,
        teamId,
        teamName: str(team.name),
        scope: str(data.scope) ?? '',
        botUserId: str(data.bot_user_id),
        appId: str(data.app_id)
      }
    },
    async userEmail (token, userId) {
      const data = await call('users.info', token, { user: userId })
      const profile = ((data.user as Json | undefined)?.profile ?? {}) as Json
      return str(profile.email)
    },
    async userIdByEmail (token, email) {
      try {
        const data = await call('users.lookupByEmail', token, { email })
        return str((data.user as Json | undefined)?.id)
      } catch (err) {
        if (err instanceof SlackApiError && err.slackError === 'users_not_found') return null
        throw err
      }
    },
    async postMessage (token, message) {
      const data = await call('chat.postMessage', token, {
        channel: message.channel,
        text: message.text,
        ...(message.blocks !== undefined ? { blocks: message.blocks } : {}),
        ...(message.threadTs !== undefined ? { thread_ts: message.threadTs } : {})
      })
      return { channel: str(data.channel) ?? message.channel, ts: str(data.ts) ?? '' }
    },
    async updateMessage (token, message) {
      await call('chat.update', token, { ...message })
    },
    async openView (token, triggerId, view) {
      await call('views.open', token, { trigger_id: triggerId, view })
    },
    async publishView (token, userId, view) {
      await call('views.publish', token, { user_id: userId, view })
    },
    async authRevoke (token) {
      await call('auth.revoke', token, {})
    },
    async respond (responseUrl, body) {
      let res: Response
      try {
        res = await fetch(responseUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs)
        })
      } catch (err) {
        throw new SlackApiError('response_url', slackErrorOf(err))
      }
      await res.arrayBuffer().catch(() => null)
      if (!res.ok) throw new SlackApiError('response_url', `HTTP ${res.status}`)
    }
  }
}
