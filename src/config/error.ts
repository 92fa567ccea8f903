/** A bad environment: one line naming the variable, printed at start-up instead of a stack. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** The one prefix every configuration error starts with. */
export function invalid (message: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${message}`)
}
