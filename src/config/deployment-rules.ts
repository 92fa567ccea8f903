import { invalid } from './error.js'

// Rules across variables that the schema alone cannot say: what a production (or any shared)
// deployment must set, and bounds that depend on each other.

export function checkDeploymentRules (env: {
  APP_ENV: string,
  PORT: number,
  METRICS_PORT?: number | undefined,
  DATABASE_URL?: string | undefined,
  HEADERS_TIMEOUT_MS: number,
  REQUEST_TIMEOUT_MS: number,
  SHUTDOWN_DRAIN_MS: number,
  SHUTDOWN_TIMEOUT_MS: number
}, publicUrl: string): void {
  const production = env.APP_ENV === 'production'
  if (production && env.DATABASE_URL === undefined) {
    throw invalid(
      'DATABASE_URL is required when APP_ENV=production (the embedded database is for local use only)'
    )
  }
  if (production && !publicUrl.startsWith('https://')) {
    throw invalid('PUBLIC_URL must be an https:// URL when APP_ENV=production')
  }
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT) {
    throw invalid('METRICS_PORT must differ from PORT (metrics have a listener of their own)')
  }
  if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
    throw invalid('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)')
  }
  if (env.SHUTDOWN_DRAIN_MS > 0 && env.SHUTDOWN_DRAIN_MS >= env.SHUTDOWN_TIMEOUT_MS) {
    throw invalid(
      'SHUTDOWN_DRAIN_MS must be less than SHUTDOWN_TIMEOUT_MS (the drain counts within the shutdown deadline, ' +
      'which would otherwise end the process, exit 1, before in-flight requests finish)'
    )
  }
}

/**
 * Outside `local` e-mail must leave through SMTP: the dev mailbox writes each message (a sign-in
 * or signup link, a live credential) to disk and to the log, which is for a developer's machine.
 */
export function checkMailTransport (env: { APP_ENV: string, SMTP_URL?: string | undefined }): void {
  if (env.APP_ENV !== 'local' && env.SMTP_URL === undefined) {
    throw invalid(
      `SMTP_URL is required when APP_ENV=${env.APP_ENV} (without it e-mails and their sign-in links ` +
      'would go to the dev mailbox and the log)'
    )
  }
}
