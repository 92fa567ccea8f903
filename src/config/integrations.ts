import { invalid } from './error.js'

// The optional peers, each configured by a set of variables that go together: all of a set,
// or none (the feature is then off and its routes answer as the contract says).

export function workosConfig (env: {
  WORKOS_API_KEY?: string | undefined,
  WORKOS_CLIENT_ID?: string | undefined,
  WORKOS_API_HOSTNAME?: string | undefined,
  WORKOS_API_PORT?: number | undefined,
  WORKOS_API_HTTPS: boolean,
  WORKOS_TIMEOUT_MS: number
}, publicUrl: string) {
  if ((env.WORKOS_API_KEY === undefined) !== (env.WORKOS_CLIENT_ID === undefined)) {
    throw invalid('WORKOS_API_KEY and WORKOS_CLIENT_ID must be set together')
  }
  if (env.WORKOS_API_KEY === undefined || env.WORKOS_CLIENT_ID === undefined) return null
  return {
    apiKey: env.WORKOS_API_KEY,
    clientId: env.WORKOS_CLIENT_ID,
    hostname: env.WORKOS_API_HOSTNAME ?? null,
    port: env.WORKOS_API_PORT ?? null,
    https: env.WORKOS_API_HTTPS,
    timeoutMs: env.WORKOS_TIMEOUT_MS,
    redirectUri: `${publicUrl}/api/oauth/callback`
  }
}

export function slackConfig (env: {
  SLACK_CLIENT_ID?: string | undefined,
  SLACK_CLIENT_SECRET?: string | undefined,
  SLACK_SIGNING_SECRET?: string | undefined,
  SLACK_API_URL: string,
  SLACK_AUTHORIZE_URL: string,
  SLACK_BOT_SCOPES: string
}, publicUrl: string, encryptionKey: Buffer | null) {
  const { SLACK_CLIENT_ID: clientId, SLACK_CLIENT_SECRET: clientSecret, SLACK_SIGNING_SECRET: signingSecret } = env
  const set = [clientId, clientSecret, signingSecret].filter(v => v !== undefined).length
  if (set !== 0 && set !== 3) {
    throw invalid('SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET must be set together')
  }
  if (clientId === undefined || clientSecret === undefined || signingSecret === undefined) return null
  if (encryptionKey === null) {
    throw invalid('ENCRYPTION_KEY is required when Slack is configured (bot tokens are encrypted at rest)')
  }
  return {
    clientId,
    clientSecret,
    signingSecret,
    apiUrl: env.SLACK_API_URL.replace(/\/+$/, ''),
    authorizeUrl: env.SLACK_AUTHORIZE_URL,
    scopes: Object.freeze(env.SLACK_BOT_SCOPES.split(',').map(s => s.trim()).filter(Boolean)),
    redirectUri: `${publicUrl}/api/oauth/slack/callback`
  }
}

/** Bounces: the return path's domain, and the DSN listener, which only has a meaning with one. */
export function bounceConfig (env: {
  BOUNCE_DOMAIN?: string | undefined,
  BOUNCE_SMTP_PORT?: number | undefined,
  BOUNCE_SMTP_HOST: string,
  BOUNCE_SMTP_MAX_BYTES: number,
  BOUNCE_SMTP_MAX_CONNECTIONS: number,
  BOUNCE_SMTP_MESSAGES_PER_PEER: number,
  BOUNCE_SMTP_REPORTS_PER_RETURN_PATH: number,
  RESEND_WEBHOOK_SECRET?: string | undefined
}) {
  const domain = env.BOUNCE_DOMAIN?.toLowerCase() ?? null
  if (env.BOUNCE_SMTP_PORT !== undefined && domain === null) {
    throw invalid('BOUNCE_SMTP_PORT needs BOUNCE_DOMAIN (the listener takes mail for its signed return paths only)')
  }
  return {
    domain,
    smtp: env.BOUNCE_SMTP_PORT === undefined
      ? null
      : {
          port: env.BOUNCE_SMTP_PORT,
          host: env.BOUNCE_SMTP_HOST,
          maxBytes: env.BOUNCE_SMTP_MAX_BYTES,
          maxConnections: env.BOUNCE_SMTP_MAX_CONNECTIONS,
          messagesPerPeer: env.BOUNCE_SMTP_MESSAGES_PER_PEER,
          reportsPerReturnPath: env.BOUNCE_SMTP_REPORTS_PER_RETURN_PATH
        },
    resendSecret: env.RESEND_WEBHOOK_SECRET ?? null
  }
}
