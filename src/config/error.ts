/** A bad environment: one line naming the variable, printed at start-up instead of a stack. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** The one prefix every configuration error starts with. */
export function invalid (message: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${message}`)
}

/**
 * A setting that is well-formed but does not work — a database nobody answers for, a port another
 * process holds, a directory that cannot be written: one line naming it and what to do, printed
 * at start-up instead of a stack, as a bad value is.
 */
export class StartupError extends ConfigError {
  override name = 'StartupError'
  constructor (readonly setting: string, problem: string, fix: string, opts?: ErrorOptions) {
    super(`Start-up failed: ${setting}: ${problem}; ${fix}`, opts)
  }
}
