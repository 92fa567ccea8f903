import type { Config } from '../src/config.js'
import type { Services } from '../src/services.js'
import type { HandlerMap } from './types.js'
import { healthHandlers } from './health.js'
import { metaHandlers } from './meta.js'

/** What every handler group is built from (no module singletons). */
export interface HandlerDeps {
  services: Services
  config: Config
  contract: Record<string, unknown>
}

/** The operationId → handler map glue binds. Its type makes a missing operation a compile error. */
export function createHandlers (deps: HandlerDeps): HandlerMap {
  return {
    ...healthHandlers(deps),
    ...metaHandlers(deps)
  } as HandlerMap
}
