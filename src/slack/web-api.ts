// A small client for the few Slack Web API methods the service calls, over plain fetch against
// SLACK_API_URL (tests point it at a loopback fake). Every call has a hard timeout. Errors name
// the method and Slack's error code only: never a token, never a response body.

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

export interface SlackWebApi {
  oauthV2Access(input: {
    clientId: string,
    clientSecret: string,
    code: string,
    redirectUri: string
  }): Promise<OAuthAccess>
  /** The e-mail on the user's Slack profile (needs users:read.email), or null when hidden. */
  userEmail(token: string, userId: string): Promise<string | null>
  postMessage(token: string, message: { channel: string, text: string, threadTs?: string }): Promise<void>
}

type Json = Record<string, unknown>

const str = (v: unknown): string | null => typeof v === 'string' && v !== '' ? v : null

export function createSlackWebApi (opts: { apiUrl: string, timeoutMs?: number }): SlackWebApi {
  const timeoutMs = opts.timeoutMs ?? 5000

  async function call (
    method: string,
    init: { token?: string, form?: Record<string, string>, json?: Json }
  ): Promise<Json> {
    const headers: Record<string, string> = {}
    if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`
    let body: string
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json; charset=utf-8'
      body = JSON.stringify(init.json)
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(init.form ?? {}).toString()
    }
    let res: Response
    try {
      res = await fetch(
        `${opts.apiUrl}/${method}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) }
      )
    } catch (err) {
      const e = err as Error
      throw new SlackApiError(
        method, e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : `request failed (${e.message})`
      )
    }
    let data: unknown
    try {
      data = await res.json()
    } catch {
      throw new SlackApiError(method, `HTTP ${res.status} without a JSON body`)
    }
    // Slack answers HTTP 200 with ok:false for most errors; 429 and 5xx come without ok:true.
    const ok = res.ok && typeof data === 'object' && data !== null && (data as Json).ok === true
    if (!ok) throw new SlackApiError(method, str((data as Json | null)?.error) ?? `HTTP ${res.status}`)
    return data as Json
  }

  return {
    async oauthV2Access (input) {
      const data = await call('oauth.v2.access', {
        form: {
          client_id: input.clientId,
          client_secret: input.clientSecret,
          code: input.code,
          redirect_uri: input.redirectUri
        }
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
      const data = await call('users.info', { token, form: { user: userId } })
      const profile = ((data.user as Json | undefined)?.profile ?? {}) as Json
      return str(profile.email)
    },
    async postMessage (token, message) {
      await call('chat.postMessage', {
        token,
        json: {
          channel: message.channel,
          text: message.text,
          ...(message.threadTs !== undefined ? { thread_ts: message.threadTs } : {})
        }
      })
    }
  }
}
