import { Type, type Static } from '@sinclair/typebox'
import { resolve } from 'node:path'
import { parseEnv } from './config/parse-env.js'
import { checkDeploymentRules, checkMailTransport } from './config/deployment-rules.js'
import { encryptionKey, previousEncryptionKeys, previousSessionSecrets, sessionSecret } from './config/secrets.js'
import { bounceConfig, slackConfig, workosConfig } from './config/integrations.js'
import { baseUrl, deepFreeze, parseTrustProxy, readVersion, type TrustProxy } from './config/values.js'

export { ConfigError } from './config/error.js'

// Environment variables, as the operator writes them: every key the service reads is in this
// one schema, and docs/configuration.md has a row for each (test/ops/docs.test.ts checks both
// ways). Every variable is optional here; the cross-field rules (production needs a database URL
// and a secret, ...) are in src/config/.
const Int = (min: number, max: number, def: number) => Type.Integer({ minimum: min, maximum: max, default: def })
const Str = (opts: Record<string, unknown> = {}) => Type.Optional(Type.String({ minLength: 1, ...opts }))
const DNS_LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?'

export const EnvSchema = Type.Object({
  APP_ENV: Type.Union(
    [Type.Literal('local'), Type.Literal('staging'), Type.Literal('production')], { default: 'local' }
  ),
  PORT: Int(0, 65535, 3000),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info' }
  ),
  LOG_FORMAT: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], { default: 'auto' }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9]+|[0-9a-fA-F.:/, ]+|loopback|linklocal|uniquelocal)$'
  }),
  PUBLIC_URL: Str({ pattern: '^https?://' }),
  APP_URL: Str({ pattern: '^https?://' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Str({ pattern: '^postgres(ql)?://' }),
  DATABASE_POOL_MAX: Int(1, 200, 20),
  DATABASE_CONNECT_TIMEOUT_MS: Int(100, 60000, 3000),
  DATABASE_QUERY_TIMEOUT_MS: Int(100, 300000, 5000),
  DATABASE_TRANSACTION_TIMEOUT_MS: Int(100, 600000, 10000),
  HEALTH_CACHE_MS: Int(0, 60000, 1000),
  RETENTION_SWEEP_MINUTES: Int(0, 24 * 60, 5),
  RETENTION_EXPIRED_TOKEN_MINUTES: Int(0, 7 * 24 * 60, 10),
  RETENTION_ENDED_DAYS: Int(1, 3650, 7),
  RETENTION_IDEMPOTENCY_HOURS: Int(24, 24 * 365, 24),
  RETENTION_CHAT_EVENTS_DAYS: Int(1, 3650, 7),
  RETENTION_BATCHES_DAYS: Int(1, 3650, 30),
  SESSION_SECRET: Str(),
  // Rotation: the secrets SESSION_SECRET and ENCRYPTION_KEY replaced, comma-separated; they only read.
  SESSION_SECRET_PREVIOUS: Str(),
  SESSION_TTL_HOURS: Int(1, 24 * 90, 24 * 7),
  INVITATION_TTL_DAYS: Int(1, 30, 7),
  INVITE_EMAILS_PER_HOUR: Int(1, 100000, 100),
  IDEMPOTENCY_LEASE_MS: Int(1000, 600000, 30000),
  BODY_LIMIT_BYTES: Int(1024, 10 * 1024 * 1024, 64 * 1024),
  SMTP_URL: Str({ pattern: '^smtps?://' }),
  SMTP_TIMEOUT_MS: Int(100, 120000, 5000),
  SMTP_POOL_CONNECTIONS: Int(1, 100, 5),
  MAIL_FROM: Type.String({ minLength: 3, default: 'Workspace <no-reply@localhost>' }),
  BOUNCE_DOMAIN: Str({ pattern: `^${DNS_LABEL}(\\.${DNS_LABEL})*$` }),
  BOUNCE_SMTP_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  BOUNCE_SMTP_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  BOUNCE_SMTP_MAX_BYTES: Int(1024, 10 * 1024 * 1024, 256 * 1024),
  BOUNCE_SMTP_MAX_CONNECTIONS: Int(1, 10000, 20),
  BOUNCE_SMTP_MESSAGES_PER_PEER: Int(1, 1000000, 120),
  BOUNCE_SMTP_REPORTS_PER_RETURN_PATH: Int(1, 1000, 5),
  RESEND_WEBHOOK_SECRET: Str({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' }),
  REDIS_URL: Str({ pattern: '^rediss?://' }),
  RATE_LIMIT_FAIL_OPEN: Type.Boolean({ default: true }),
  API_KEY_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 100),
  API_KEY_REST_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 6000),
  API_KEY_SCIM_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 30000),
  AUTH_RATE_LIMIT_PER_MINUTE: Int(1, 1000000, 30),
  API_KEY_FAILURES_PER_MINUTE: Int(1, 1000000, 20),
  RATE_LIMIT_IPV6_PREFIX: Int(1, 128, 64),
  API_KEYS_PER_WORKSPACE: Int(1, 10000, 10),
  INVITE_REQUESTS_PER_MEMBER: Int(1, 10000, 10),
  INVITE_LINK_JOINS_PER_HOUR: Int(1, 100000, 60),
  SHUTDOWN_TIMEOUT_MS: Int(100, 600000, 10000),
  SHUTDOWN_DRAIN_MS: Int(0, 600000, 0),
  HEADERS_TIMEOUT_MS: Int(100, 600000, 10000),
  REQUEST_TIMEOUT_MS: Int(100, 600000, 30000),
  CONNECTION_TIMEOUT_MS: Int(100, 3600000, 120000),
  KEEP_ALIVE_TIMEOUT_MS: Int(100, 600000, 72000),
  MAX_CONNECTIONS: Int(0, 1000000, 800),
  MAX_CONNECTIONS_PER_ADDRESS: Int(0, 1000000, 100),
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
    default: 'app_mentions:read,chat:write,commands,im:history,users:read,users:read.email'
  }),
  ENCRYPTION_KEY: Str(),
  ENCRYPTION_KEY_PREVIOUS: Str(),
  JOBS_SCHEMA: Type.String({ pattern: '^[a-z_][a-z0-9_]{0,49}$', default: 'pgboss' }),
  JOBS_POLL_MS: Int(500, 60000, 2000),
  JOBS_MAINTENANCE_SECONDS: Int(1, 3600, 60),
  WEBHOOK_TIMEOUT_MS: Int(100, 60000, 15000),
  WEBHOOK_RETRY_DELAYS_MS: Type.String({
    pattern: '^[0-9]{1,9}(,[0-9]{1,9}){0,19}$',
    default: '5000,300000,1800000,7200000,18000000,36000000,36000000'
  }),
  WEBHOOK_DISABLE_AFTER_MS: Int(1000, 30 * 86_400_000, 3 * 86_400_000),
  // Host names an SSO issuer or metadata URL may reach on a private network, comma-separated.
  SSO_ALLOWED_HOSTS: Str({ pattern: `^${DNS_LABEL}(\\.${DNS_LABEL})*(, *${DNS_LABEL}(\\.${DNS_LABEL})*)*$` }),
  // Name servers for domain verification (TXT lookups): IPv4, [IPv6], each with an optional :port.
  DNS_SERVERS: Str({ pattern: '^[0-9a-fA-F.:\\[\\]]+(, *[0-9a-fA-F.:\\[\\]]+)*$' }),
  DNS_TIMEOUT_MS: Int(100, 60000, 5000),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: Int(0, 60000, 0),
  LOAD_SHED_SAMPLE_INTERVAL_MS: Int(10, 60000, 1000),
  OTEL_EXPORTER_OTLP_ENDPOINT: Str({ pattern: '^https?://' }),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'workspace-service' })
})
type Env = Static<typeof EnvSchema>

export interface Config {
  readonly appEnv: 'local' | 'staging' | 'production'
  readonly version: string
  readonly port: number
  readonly host: string
  readonly logLevel: string
  /** auto: pretty lines when stdout is a terminal, JSON lines otherwise (src/logger.ts). */
  readonly logFormat: 'auto' | 'json' | 'pretty'
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
    /** Login tokens and OAuth states (written by anonymous callers) go this long after they expire. */
    readonly expiredTokenMinutes: number,
    readonly endedDays: number,
    readonly idempotencyHours: number,
    readonly chatEventsDays: number,
    /** Completed invitation batches (their rows hold every address sent) go this long after completing. */
    readonly batchesDays: number
  }
  readonly session: {
    readonly secret: string,
    /** SESSION_SECRET_PREVIOUS: secrets that still verify and open what they made, never make anything. */
    readonly previousSecrets: readonly string[],
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
  /** SHUTDOWN_DRAIN_MS: serving on with `Connection: close` and health 503 before the listener closes. */
  readonly shutdownDrainMs: number
  /** Live API keys a workspace may hold (each has its own MCP rate limit). */
  readonly apiKeysPerWorkspace: number
  /** Pending invite requests one member may have open at once (each one DMs every admin). */
  readonly inviteRequestsPerMember: number
  /** Confirmation e-mails one invite link may send an hour (POST /api/join/{code}); 429 beyond. */
  readonly inviteLinkJoinsPerHour: number
  /** Bounds on one client connection (slow or idle clients), in ms. */
  readonly timeouts: {
    readonly headers: number,
    readonly request: number,
    readonly connection: number,
    readonly keepAlive: number
  }
  /** Open connections at once, in all and per peer address (0: no cap); src/connection-caps.ts. */
  readonly connections: { readonly max: number, readonly perAddress: number }
  readonly smtp: {
    readonly url: string | null,
    readonly timeoutMs: number,
    readonly from: string,
    /** Connections to the relay at most, pooled (one send waits for a free one within its deadline). */
    readonly poolConnections: number
  }
  /** Bounces (src/bounces): the signed return path's domain, the DSN listener, the provider webhook's secret. */
  readonly bounces: {
    /** null: invitation e-mails keep MAIL_FROM as their envelope sender (no return path of ours). */
    readonly domain: string | null,
    /** The DSN listener (smtp-server); null: off. */
    readonly smtp: null | {
      readonly port: number,
      readonly host: string,
      readonly maxBytes: number,
      readonly maxConnections: number,
      /** Messages a peer address may send a minute; reports a return path may receive an hour. */
      readonly messagesPerPeer: number,
      readonly reportsPerReturnPath: number
    },
    /** Resend's webhook signing secret (`whsec_…`); null: its intake answers 401 to everything. */
    readonly resendSecret: string | null
  }
  readonly rateLimit: {
    readonly redisUrl: string | null,
    readonly failOpen: boolean,
    /** JSON-RPC messages per key a minute on the MCP endpoint. */
    readonly apiKeyPerMinute: number,
    /** Requests per key a minute on the REST operations open to keys (one budget for all of them). */
    readonly apiKeyRestPerMinute: number,
    /** Requests per key a minute under /scim/v2 (a directory's budget, apart from the REST one). */
    readonly apiKeyScimPerMinute: number,
    readonly authPerMinute: number,
    /** Failed API-key attempts per client address a minute, before its bearer attempts get 429. */
    readonly apiKeyFailuresPerMinute: number,
    readonly ipv6Prefix: number
  }
  /** Domain verification's TXT lookups: these name servers (empty: the system's), each try bounded. */
  readonly dns: { readonly servers: readonly string[], readonly timeoutMs: number }
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
  /** ENCRYPTION_KEY_PREVIOUS: keys that still open what they sealed (src/lib/secret-keys.ts). */
  readonly previousEncryptionKeys: readonly Buffer[]
  /** The job engine (pg-boss): its schema, how often idle workers poll, its maintenance pace. */
  readonly jobs: { readonly schema: string, readonly pollMs: number, readonly maintenanceSeconds: number }
  readonly webhooks: {
    /** One attempt's deadline (connect, send, answer). */
    readonly timeoutMs: number,
    /** Waits before the 2nd, 3rd, … attempt (jittered); after the last, the delivery has failed. */
    readonly retryDelaysMs: readonly number[],
    /** An endpoint failing without a success for this long is disabled. */
    readonly disableAfterMs: number,
    /** staging/production: https only, public addresses only (SSRF); local also allows http and loopback. */
    readonly allowPrivateAddresses: boolean
  }
  /** Single sign-on: the connections' issuer and metadata URLs follow the webhooks' address policy. */
  readonly sso: {
    /** SSO_ALLOWED_HOSTS (lower case): hosts allowed though they resolve to a private address. */
    readonly allowedHosts: readonly string[]
  }
  /** Prometheus metrics on a listener of their own; port null: no metrics collected at all. */
  readonly metrics: { readonly port: number | null, readonly host: string }
  /** 503 while the event loop's mean delay over a sample interval passes the threshold; 0: off. */
  readonly loadShedding: { readonly maxEventLoopDelayMs: number, readonly sampleIntervalMs: number }
  /** OpenTelemetry traces over OTLP/HTTP; endpoint null: off, nothing of OpenTelemetry is loaded. */
  readonly tracing: { readonly endpoint: string | null, readonly serviceName: string }
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
  const env = parseEnv(EnvSchema, rawEnv)
  const publicUrl = baseUrl(env.PUBLIC_URL ?? `http://localhost:${env.PORT}`)
  const dataDir = opts.ephemeral === true ? null : resolve(env.DATA_DIR)
  checkDeploymentRules(env, publicUrl)
  const { secret, generated } = sessionSecret(env, dataDir, opts.warn ?? (() => {}))
  checkMailTransport(env)
  const key = encryptionKey(env.ENCRYPTION_KEY)
  return deepFreeze(configOf(env, {
    version: readVersion(opts.root),
    publicUrl,
    appUrl: baseUrl(env.APP_URL ?? publicUrl),
    dataDir,
    secret,
    generated,
    encryptionKey: key,
    previousSecrets: previousSessionSecrets(env.SESSION_SECRET_PREVIOUS),
    previousEncryptionKeys: previousEncryptionKeys(env.ENCRYPTION_KEY_PREVIOUS),
    workos: workosConfig(env, publicUrl),
    slack: slackConfig(env, publicUrl, key),
    bounces: bounceConfig(env)
  }))
}

/** What the checks and conversions above made of several variables, or of more than the env. */
type DerivedKey = 'version' | 'publicUrl' | 'appUrl' | 'dataDir' | 'encryptionKey' | 'previousEncryptionKeys' |
  'workos' | 'slack' | 'bounces'
interface Derived extends Pick<Config, DerivedKey> {
  secret: string
  previousSecrets: readonly string[]
  generated: boolean
}

/** The Config, key by key: a new setting is one line in EnvSchema, Config and here. */
function configOf (env: Env, derived: Derived): Config {
  const { version, publicUrl, appUrl, dataDir, secret, previousSecrets, generated, workos, slack, bounces } = derived
  return {
    appEnv: env.APP_ENV,
    version,
    port: env.PORT,
    host: env.HOST,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
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
      expiredTokenMinutes: env.RETENTION_EXPIRED_TOKEN_MINUTES,
      endedDays: env.RETENTION_ENDED_DAYS,
      idempotencyHours: env.RETENTION_IDEMPOTENCY_HOURS,
      chatEventsDays: env.RETENTION_CHAT_EVENTS_DAYS,
      batchesDays: env.RETENTION_BATCHES_DAYS
    },
    session: {
      secret,
      previousSecrets,
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
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    apiKeysPerWorkspace: env.API_KEYS_PER_WORKSPACE,
    inviteRequestsPerMember: env.INVITE_REQUESTS_PER_MEMBER,
    inviteLinkJoinsPerHour: env.INVITE_LINK_JOINS_PER_HOUR,
    timeouts: {
      headers: env.HEADERS_TIMEOUT_MS,
      request: env.REQUEST_TIMEOUT_MS,
      connection: env.CONNECTION_TIMEOUT_MS,
      keepAlive: env.KEEP_ALIVE_TIMEOUT_MS
    },
    connections: { max: env.MAX_CONNECTIONS, perAddress: env.MAX_CONNECTIONS_PER_ADDRESS },
    smtp: {
      url: env.SMTP_URL ?? null,
      timeoutMs: env.SMTP_TIMEOUT_MS,
      from: env.MAIL_FROM,
      poolConnections: env.SMTP_POOL_CONNECTIONS
    },
    bounces,
    rateLimit: {
      redisUrl: env.REDIS_URL ?? null,
      failOpen: env.RATE_LIMIT_FAIL_OPEN,
      apiKeyPerMinute: env.API_KEY_RATE_LIMIT_PER_MINUTE,
      apiKeyRestPerMinute: env.API_KEY_REST_RATE_LIMIT_PER_MINUTE,
      apiKeyScimPerMinute: env.API_KEY_SCIM_RATE_LIMIT_PER_MINUTE,
      authPerMinute: env.AUTH_RATE_LIMIT_PER_MINUTE,
      apiKeyFailuresPerMinute: env.API_KEY_FAILURES_PER_MINUTE,
      ipv6Prefix: env.RATE_LIMIT_IPV6_PREFIX
    },
    workos,
    slack,
    encryptionKey: derived.encryptionKey,
    previousEncryptionKeys: derived.previousEncryptionKeys,
    jobs: { schema: env.JOBS_SCHEMA, pollMs: env.JOBS_POLL_MS, maintenanceSeconds: env.JOBS_MAINTENANCE_SECONDS },
    webhooks: {
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      retryDelaysMs: Object.freeze(env.WEBHOOK_RETRY_DELAYS_MS.split(',').map(Number)),
      disableAfterMs: env.WEBHOOK_DISABLE_AFTER_MS,
      allowPrivateAddresses: env.APP_ENV === 'local'
    },
    sso: {
      allowedHosts: Object.freeze(
        (env.SSO_ALLOWED_HOSTS ?? '').split(',').map(s => s.trim().toLowerCase()).filter(s => s !== '')
      )
    },
    dns: {
      servers: Object.freeze((env.DNS_SERVERS ?? '').split(',').map(s => s.trim()).filter(s => s !== '')),
      timeoutMs: env.DNS_TIMEOUT_MS
    },
    metrics: { port: env.METRICS_PORT ?? null, host: env.METRICS_HOST },
    loadShedding: {
      maxEventLoopDelayMs: env.LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS,
      sampleIntervalMs: env.LOAD_SHED_SAMPLE_INTERVAL_MS
    },
    tracing: { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT ?? null, serviceName: env.OTEL_SERVICE_NAME }
  }
}
