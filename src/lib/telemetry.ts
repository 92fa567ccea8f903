// What the domain and the plugins report for operators, as two small ports: a Meter (counts for
// the Prometheus metrics, src/plugins/metrics.ts) and a Tracer (spans for OpenTelemetry,
// src/telemetry/tracing.ts). Neither library is imported below the plugins: when METRICS_PORT or
// OTEL_EXPORTER_OTLP_ENDPOINT is unset, the no-op implementations here are all there is.

/** How an invitation went out: the identity provider's invitation, or our own e-mail. */
type DeliveryPath = 'identity_provider' | 'email'
/** What the rate limits count per: a client address, an API key, a workspace's invitation e-mails. */
export type RateLimitScope =
  'client-ip' | 'api-key' | 'api-key-only' | 'directory' | 'invitation-emails' | 'api-key-failures'

export interface Meter {
  /** One delivery attempt on one path: handed over (`sent`) or not (`failed`). */
  invitationDelivery(path: DeliveryPath, outcome: 'sent' | 'failed'): void
  /** One request or draw refused by a rate limit or budget. */
  rateLimitRefusal(scope: RateLimitScope): void
  /** One SQL statement that failed (any reason: a constraint, a timeout, a lost connection). */
  databaseQueryError(): void
  /** One call that used something the contract deprecates (`use`: operation, query.<name>, body.<name> …). */
  deprecatedCall(operationId: string, use: string): void
}

type SpanAttributes = Record<string, string | number | boolean>

export interface Tracer {
  /** Runs `work` in a child span of the current one (ended when it settles, marked failed if it throws). */
  span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T>
}

export const noopMeter: Meter = {
  invitationDelivery () {},
  rateLimitRefusal () {},
  databaseQueryError () {},
  deprecatedCall () {}
}

export const noopTracer: Tracer = {
  async span (_name, _attributes, work) { return await work() }
}
