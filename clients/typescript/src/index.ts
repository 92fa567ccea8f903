import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch'
import type { components, paths } from './openapi.js'

// The Workspace Service's typed client: openapi-fetch typed by the contract (openapi.yaml through
// openapi-typescript, the same types the service and its console use), plus what a client of
// this service needs besides: the session cookie kept outside a browser, an API key as a bearer
// token, and the service's deprecation notices (Deprecation / Sunset headers) reported.
// Version: the contract's info.version (docs/contract-versioning.md).

export type { components, operations, paths, webhooks } from './openapi.js'
/** The contract's schemas by name: `Schemas['Invitation']`, `Schemas['ErrorResponse']` … */
export type Schemas = components['schemas']
export type WorkspaceClient = Client<paths>

/** What the service said about a deprecated operation or input the call used. */
export interface DeprecationNotice {
  method: string
  /** The contract's path template, e.g. `/api/invitations`. */
  path: string
  /** RFC 9745 `@<unix seconds>`: when it was deprecated. */
  deprecation: string
  /** RFC 8594 HTTP-date after which it may be removed; null when none is set. */
  sunset: string | null
  /** The Link header: where the deprecation is explained. */
  link: string | null
}

export interface WorkspaceClientOptions extends ClientOptions {
  /** An API key (`wsk_…`), sent as `Authorization: Bearer`: what the MCP endpoint takes. */
  apiKey?: string
  /**
   * Keep the `service_session` cookie the service sets (setup, sign-up, sign-in) and send it
   * back, for clients outside a browser (a browser keeps cookies itself). Default false.
   */
  keepSession?: boolean
  /** Called for each answer that carries a Deprecation header. */
  onDeprecation?: (notice: DeprecationNotice) => void
}

const SESSION_COOKIE = 'service_session'

/** The session cookie's value from Set-Cookie lines: a string, null when cleared, undefined when absent. */
function sessionFrom (response: Response): string | null | undefined {
  for (const line of response.headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';')
    const eq = pair.indexOf('=')
    if (eq < 0 || pair.slice(0, eq).trim() !== SESSION_COOKIE) continue
    const value = pair.slice(eq + 1).trim()
    const cleared = value === '' || attributes.some(a => /^\s*max-age=0\s*$/i.test(a))
    return cleared ? null : value
  }
  return undefined
}

/** A typed client of the service at `baseUrl` (every path of the contract starts with `/api`). */
export function createWorkspaceClient (options: WorkspaceClientOptions = {}): WorkspaceClient {
  const { apiKey, keepSession = false, onDeprecation, ...clientOptions } = options
  const client = createClient<paths>(clientOptions)
  let session: string | undefined
  const middleware: Middleware = {
    onRequest ({ request }) {
      if (apiKey !== undefined) request.headers.set('authorization', `Bearer ${apiKey}`)
      if (session !== undefined) request.headers.set('cookie', `${SESSION_COOKIE}=${session}`)
      return request
    },
    onResponse ({ request, response, schemaPath }) {
      if (keepSession) {
        const next = sessionFrom(response)
        if (next === null) session = undefined
        else if (next !== undefined) session = next
      }
      const deprecation = response.headers.get('deprecation')
      if (deprecation !== null && onDeprecation !== undefined) {
        onDeprecation({
          method: request.method,
          path: schemaPath,
          deprecation,
          sunset: response.headers.get('sunset'),
          link: response.headers.get('link')
        })
      }
      return response
    }
  }
  client.use(middleware)
  return client
}
