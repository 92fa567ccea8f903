import { WorkOS } from '@workos-inc/node'
import type { Config } from '../config.js'

/** The official WorkOS SDK, pointed at WORKOS_API_HOSTNAME/PORT/HTTPS when set (tests: a loopback fake). */
export function createWorkOS (cfg: NonNullable<Config['workos']>): WorkOS {
  return new WorkOS(cfg.apiKey, {
    clientId: cfg.clientId,
    ...(cfg.hostname !== null ? { apiHostname: cfg.hostname } : {}),
    ...(cfg.port !== null ? { port: cfg.port } : {}),
    https: cfg.https,
    // The SDK's own default is 60 s; every call is bounded by WORKOS_TIMEOUT_MS.
    timeout: cfg.timeoutMs
  })
}
