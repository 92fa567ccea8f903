import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'

// Environment variables, as the operator writes them. Every variable is optional here; the
// cross-field rules (production needs a database URL and a secret, ...) follow in loadConfig.
const Int = (min: number, max: number, def: number) => Type.Integer({ minimum: min, maximum: max, default: def })
const Str = (opts: Record<string, unknown> = {}) => Type.Optional(Type.String({ minLength: 1, ...opts }))

const EnvSchema = Type.Object({
  APP_ENV: Type.Union(
    [Type.Literal('local'), Type.Literal('staging'), Type.Literal('production')], { default: 'local' }
  ),
  PORT: Int(0, 65535, 3000),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info' }
  ),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9]+|[0-9a-fA-F.:/, ]+|loopback|linklocal|uniquelocal)$'
  }),
  PUBLIC_URL: Str({ pattern: '^https?://' }),
  APP_URL: Str({ pattern: '^https?://' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Str({ pattern: '^postgres(ql)?://' }),
  DATABASE_POOL_MAX: Int(1, 200, 10),
  DATABASE_CONNECT_TIMEOUT_MS: Int(100, 60000, 3000),
  DATABASE_QUERY_TIMEOUT_MS: Int(100, 300000, 5000),
  DATABASE_TRANSACTION_TIMEOUT_MS: Int(100, 600000, 10000),
  HEALTH_CACHE_MS: Int(0, 60000, 1000),
  RETENTION_SWEEP_MINUTES: Int(0, 24 * 60, 60),
  RETENTION_ENDED_DAYS: Int(1, 3650, 7),
  RETENTION_IDEMPOTENCY_HOURS: Int(24, 24 * 365, 24),
  RETENTION_CHAT_EVENTS_DAYS: Int(1, 3650, 7),
  SESSION_SECRET: Str(),
  SESSION_TTL_HOURS: Int(1, 24 * 90, 24 * 7),
  INVITATION_TTL_DAYS: Int(1, 30, 7),
  INVITE_EMAILS_PER_HOUR: Int(1, 100000, 100),
  IDEMPOTENCY_LEASE_MS: Int(1000, 600000, 30000),
  BODY_LIMIT_BYTES: Int(1024, 10 * 1024 * 1024, 64 * 1024),
  SMTP_URL: Str({ pattern: '^smtps?://' }),
  SMTP_TIMEOUT_MS: Int(100, 120000, 5000),
  MAIL_FROM: Type.String({ minLength: 3, default: 'Workspace <no-reply@localhost>' }),
  REDIS_URL: Str({ pattern: '^rediss?://' }),
  RATE_LIMIT_FAIL_OPEN: Type.Boolean({ default: true }),
  API_KEY_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 100),
  AUTH_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 30),
  RATE_LIMIT_IPV6_PREFIX: Int(1, 128, 64),
  API_KEYS_PER_WORKSPACE: Int(1, 10000, 10),
  SHUTDOWN_TIMEOUT_MS: Int(100, 600000, 10000),
  HEADERS_TIMEOUT_MS: Int(100, 600000, 10000),
  REQUEST_TIMEOUT_MS: Int(100, 600000, 30000),
  CONNECTION_TIMEOUT_MS: Int(100, 3600000, 120000),
  KEEP_ALIVE_TIMEOUT_MS: Int(100, 600000, 72000),
  WORKOS_API_KEY: Str(),
  WORKOS_CLIENT_ID: Str(),
  WORKOS_API_HOSTNAME: Str(),
  WORKOS_API_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  WORKOS_API_HTTPS: Type.Boolean({ default: true }),
  WORKOS_TIMEOUT_MS: Int(100, 60000, 3000),
  SLACK_CLIENT_ID: Str(),
  SLACK_CLIENT_SECRET: Str(),
  SLACK_SIGNING_SECRET: Str(),
  SLACK_API_URL: Type.String({ pattern: '^https?://', default: 'https://slack.com/api' }),
  SLACK_AUTHORIZE_URL: Type.String({ pattern: '^https?://', default: 'https://slack.com/oauth/v2/authorize' }),
  SLACK_BOT_SCOPES: Type.String({
    minLength: 1,
    default: 'app_mentions:read,chat:write,im:history,users:read,users:read.email'
  }),
  ENCRYPTION_KEY: Str()
})
type Env = Static<typeof EnvSchema>

type TrustProxy = boolean | number | string

export interface Config {
  readonly appEnv: 'local' | 'staging' | 'production'
  readonly version: string
  readonly port: number
  readonly host: string
  readonly logLevel: string
  readonly trustProxy: TrustProxy
  readonly publicUrl: string
  readonly appUrl: string
  /** null: keep nothing on disk (tests); the embedded database then lives in memory. */
  readonly dataDir: string | null
  readonly databaseUrl: string | null
  readonly databasePoolMax: number
  /** Deadlines of every database use (PostgreSQL): connect/acquire, one statement, one transaction. */
  readonly databaseTimeouts: {
    readonly connectTimeoutMs: number,
    readonly queryTimeoutMs: number,
    readonly transactionTimeoutMs: number
  }
  /** How long a successful database check answers /api/health; failures are never reused. */
  readonly healthCacheMs: number
  /** The retention sweep: how often (0: never) and how long dead rows are kept (src/housekeeping). */
  readonly retention: {
    readonly sweepMinutes: number,
    readonly endedDays: number,
    readonly idempotencyHours: number,
    readonly chatEventsDays: number
  }
  readonly session: {
    readonly secret: string,
    readonly ttlSeconds: number,
    readonly secureCookie: boolean,
    readonly generated: boolean
  }
  readonly invitationTtlDays: number
  readonly inviteEmailsPerHour: number
  /** How long an Idempotency-Key claim holds without renewal (its owner renews it while working). */
  readonly idempotencyLeaseMs: number
  readonly bodyLimit: number
  readonly shutdownTimeoutMs: number
  /** Live API keys a workspace may hold (each has its own MCP rate limit). */
  readonly apiKeysPerWorkspace: number
  /** Bounds on one client connection (slow or idle clients), in ms. */
  readonly timeouts: {
    readonly headers: number,
    readonly request: number,
    readonly connection: number,
    readonly keepAlive: number
  }
  readonly smtp: { readonly url: string | null, readonly timeoutMs: number, readonly from: string }
  readonly rateLimit: {
    readonly redisUrl: string | null,
    readonly failOpen: boolean,
    readonly apiKeyPerMinute: number,
    readonly authPerMinute: number,
    readonly ipv6Prefix: number
  }
  readonly workos: null | {
    readonly apiKey: string,
    readonly clientId: string,
    readonly hostname: string | null,
    readonly port: number | null,
    readonly https: boolean,
    readonly timeoutMs: number,
    readonly redirectUri: string
  }
  readonly slack: null | {
    readonly clientId: string,
    readonly clientSecret: string,
    readonly signingSecret: string,
    readonly apiUrl: string,
    readonly authorizeUrl: string,
    readonly scopes: readonly string[],
    readonly redirectUri: string
  }
  readonly encryptionKey: Buffer | null
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

function describe (schema: TSchema): string {
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.anyOf)) return 'one of ' + (s.anyOf as Array<{ const: unknown }>).map(x => String(x.const)).join(' | ')
  if (s.type === 'integer') return `an integer from ${String(s.minimum)} to ${String(s.maximum)}`
  if (s.type === 'boolean') return 'true or false'
  if (typeof s.pattern === 'string') return `a value matching ${s.pattern}`
  return 'a non-empty string'
}

/** Parse the environment. Throws ConfigError with one line naming the first bad variable. */
function parseEnv (raw: Record<string, string | undefined>): Env {
  const picked: Record<string, unknown> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = raw[key]
    if (v !== undefined && v !== '') picked[key] = v
  }
  const converted = Value.Convert(EnvSchema, Value.Default(EnvSchema, picked))
  const first = Value.Errors(EnvSchema, converted).First()
  if (first !== undefined) {
    const name = first.path.replace(/^\//, '')
    const prop = (EnvSchema.properties as Record<string, TSchema>)[name]
    const got = raw[name]
    throw new ConfigError(
      `Invalid configuration: ${name} must be ${prop ? describe(prop) : 'valid'} (got ${JSON.stringify(got)})`
    )
  }
  return converted as Env
}

function parseTrustProxy (v: string): TrustProxy {
  if (v === 'true') return true
  if (v === 'false') return false
  if (/^[0-9]+$/.test(v)) return Number(v)
  return v
}

function readVersion (root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
}

export interface LoadOptions {
  /** Project root (for package.json's version). */
  root: string
  /** Keep nothing on disk: in-memory database, no generated secret file (tests). */
  ephemeral?: boolean
  /** Called with warnings to log once the logger exists. */
  warn?: (msg: string) => void
}

/** Environment → typed, frozen Config. Throws ConfigError (one clear line) on a bad value. */
export function loadConfig (rawEnv: Record<string, string | undefined>, opts: LoadOptions): Config {
  const env = parseEnv(rawEnv)
  const warn = opts.warn ?? (() => {})
  const production = env.APP_ENV === 'production'
  const publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '')
  const appUrl = (env.APP_URL ?? publicUrl).replace(/\/+$/, '')
  const dataDir = opts.ephemeral === true ? null : resolve(env.DATA_DIR)

  if (production && env.DATABASE_URL === undefined) {
    throw new ConfigError(
      'Invalid configuration: DATABASE_URL is required when APP_ENV=production (the embedded database is for local use only)'
    )
  }
  if (production && !publicUrl.startsWith('https://')) {
    throw new ConfigError('Invalid configuration: PUBLIC_URL must be an https:// URL when APP_ENV=production')
  }
  if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      'Invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)'
    )
  }

  let secret = env.SESSION_SECRET
  let generated = false
  if (secret !== undefined && Buffer.byteLength(secret) < 32) {
    throw new ConfigError('Invalid configuration: SESSION_SECRET must be at least 32 bytes')
  }
  if (secret === undefined) {
    if (env.APP_ENV !== 'local') {
      throw new ConfigError(
        `Invalid configuration: SESSION_SECRET (at least 32 bytes) is required when APP_ENV=${env.APP_ENV}`
      )
    }
    generated = true
    if (dataDir === null) {
      secret = randomBytes(32).toString('base64url')
    } else {
      // Generated once and kept, so sessions survive restarts of a local service.
      const file = join(dataDir, 'session-secret')
      if (existsSync(file)) {
        secret = readFileSync(file, 'utf8').trim()
      } else {
        mkdirSync(dataDir, { recursive: true })
        secret = randomBytes(32).toString('base64url')
        writeFileSync(file, secret + '\n', { mode: 0o600 })
      }
      warn(
        `SESSION_SECRET is not set; using a generated secret kept in ${file} (set SESSION_SECRET outside local development)`
      )
    }
  }

  let encryptionKey: Buffer | null = null
  if (env.ENCRYPTION_KEY !== undefined) {
    const k = /^[0-9a-fA-F]{64}$/.test(env.ENCRYPTION_KEY)
      ? Buffer.from(
        env.ENCRYPTION_KEY, 'hex'
      )
      : Buffer.from(env.ENCRYPTION_KEY, 'base64')
    if (k.length !== 32) {
      throw new ConfigError(
        'Invalid configuration: ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64'
      )
    }
    encryptionKey = k
  }

  const workos = env.WORKOS_API_KEY !== undefined && env.WORKOS_CLIENT_ID !== undefined
    ? {
        apiKey: env.WORKOS_API_KEY,
        clientId: env.WORKOS_CLIENT_ID,
        hostname: env.WORKOS_API_HOSTNAME ?? null,
        port: env.WORKOS_API_PORT ?? null,
        https: env.WORKOS_API_HTTPS,
        timeoutMs: env.WORKOS_TIMEOUT_MS,
        redirectUri: `${publicUrl}/api/oauth/callback`
      }
    : null
  if ((env.WORKOS_API_KEY === undefined) !== (env.WORKOS_CLIENT_ID === undefined)) {
    throw new ConfigError('Invalid configuration: WORKOS_API_KEY and WORKOS_CLIENT_ID must be set together')
  }

  const slackVars = [env.SLACK_CLIENT_ID, env.SLACK_CLIENT_SECRET, env.SLACK_SIGNING_SECRET]
  if (slackVars.some(v => v !== undefined) && slackVars.some(v => v === undefined)) {
    throw new ConfigError(
      'Invalid configuration: SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET must be set together'
    )
  }
  if (slackVars.every(v => v !== undefined) && encryptionKey === null) {
    throw new ConfigError(
      'Invalid configuration: ENCRYPTION_KEY is required when Slack is configured (bot tokens are encrypted at rest)'
    )
  }
  const slack = env.SLACK_CLIENT_ID !== undefined && env.SLACK_CLIENT_SECRET !== undefined &&
    env.SLACK_SIGNING_SECRET !== undefined
    ? {
        clientId: env.SLACK_CLIENT_ID,
        clientSecret: env.SLACK_CLIENT_SECRET,
        signingSecret: env.SLACK_SIGNING_SECRET,
        apiUrl: env.SLACK_API_URL.replace(/\/+$/, ''),
        authorizeUrl: env.SLACK_AUTHORIZE_URL,
        scopes: Object.freeze(env.SLACK_BOT_SCOPES.split(',').map(s => s.trim()).filter(Boolean)),
        redirectUri: `${publicUrl}/api/oauth/slack/callback`
      }
    : null

  const config: Config = {
    appEnv: env.APP_ENV,
    version: readVersion(opts.root),
    port: env.PORT,
    host: env.HOST,
    logLevel: env.LOG_LEVEL,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    publicUrl,
    appUrl,
    dataDir,
    databaseUrl: env.DATABASE_URL ?? null,
    databasePoolMax: env.DATABASE_POOL_MAX,
    databaseTimeouts: {
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
      transactionTimeoutMs: env.DATABASE_TRANSACTION_TIMEOUT_MS
    },
    healthCacheMs: env.HEALTH_CACHE_MS,
    retention: {
      sweepMinutes: env.RETENTION_SWEEP_MINUTES,
      endedDays: env.RETENTION_ENDED_DAYS,
      idempotencyHours: env.RETENTION_IDEMPOTENCY_HOURS,
      chatEventsDays: env.RETENTION_CHAT_EVENTS_DAYS
    },
    session: {
      secret,
      ttlSeconds: env.SESSION_TTL_HOURS * 3600,
      // Secure everywhere except a plain-http local service (a browser would drop the cookie).
      secureCookie: !(publicUrl.startsWith('http://') && env.APP_ENV === 'local'),
      generated
    },
    invitationTtlDays: env.INVITATION_TTL_DAYS,
    inviteEmailsPerHour: env.INVITE_EMAILS_PER_HOUR,
    idempotencyLeaseMs: env.IDEMPOTENCY_LEASE_MS,
    bodyLimit: env.BODY_LIMIT_BYTES,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    apiKeysPerWorkspace: env.API_KEYS_PER_WORKSPACE,
    timeouts: {
      headers: env.HEADERS_TIMEOUT_MS,
      request: env.REQUEST_TIMEOUT_MS,
      connection: env.CONNECTION_TIMEOUT_MS,
      keepAlive: env.KEEP_ALIVE_TIMEOUT_MS
    },
    smtp: { url: env.SMTP_URL ?? null, timeoutMs: env.SMTP_TIMEOUT_MS, from: env.MAIL_FROM },
    rateLimit: {
      redisUrl: env.REDIS_URL ?? null,
      failOpen: env.RATE_LIMIT_FAIL_OPEN,
      apiKeyPerMinute: env.API_KEY_RATE_LIMIT_PER_MINUTE,
      authPerMinute: env.AUTH_RATE_LIMIT_PER_MINUTE,
      ipv6Prefix: env.RATE_LIMIT_IPV6_PREFIX
    },
    workos,
    slack,
    encryptionKey
  }
  return deepFreeze(config)
}

function deepFreeze<T> (o: T): T {
  if (o !== null && typeof o === 'object' && !Buffer.isBuffer(o)) {
    for (const v of Object.values(o)) deepFreeze(v)
    Object.freeze(o)
  }
  return o
}
