import type { FastifyReply } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { serviceError, type ServiceError } from '../src/errors.js'
import { createMcpEndpoint } from '../src/mcp/endpoint.js'
import { createMcpTools } from '../src/mcp/tools.js'

// POST /api/mcp. The SDK's web-standard transport answers a Request with a Response, so the
// reply stays Fastify's (no hijack): rate-limit headers, hooks, logging and the one error handler
// all apply. The transport's own refusals (JSON-RPC error bodies) become registry errors, so every
// non-2xx answer is an ErrorResponse as the contract says.

/** The headers the transport reads; nothing else (cookies, authorization) is handed to it. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']

async function transportRefusal (res: Response): Promise<ServiceError> {
  let rpc: { code?: unknown, message?: unknown } | undefined
  try {
    rpc = ((await res.json()) as { error?: { code?: unknown, message?: unknown } }).error
  } catch {}
  const message = typeof rpc?.message === 'string' ? rpc.message : `MCP transport answered ${res.status}`
  const details = { jsonrpc: { code: rpc?.code ?? null, message } }
  switch (res.status) {
    case 400: return serviceError('VALIDATION_FAILED', [message], details)
    case 406: return serviceError('NOT_ACCEPTABLE', [], details)
    case 413: return serviceError('PAYLOAD_TOO_LARGE', ['the allowed number of'], details)
    case 415: return serviceError('UNSUPPORTED_MEDIA_TYPE', [], details)
    // Anything else (404 "session not found" cannot happen when stateless) is ours to fix.
    default: return serviceError('INTERNAL_ERROR')
  }
}

export function mcpHandlers ({ services, config, contract }: HandlerDeps): HandlerGroup<'postMcp' | 'getMcp'> {
  const endpoint = createMcpEndpoint({ tools: createMcpTools(contract, services), version: config.version })
  return {
    // Streamable HTTP lets a client open a server-sent event stream with GET; a stateless server
    // has none and, as the MCP specification asks, answers 405 (the SDK's client expects it).
    async getMcp () {
      const err = serviceError('METHOD_NOT_ALLOWED', ['GET', '/api/mcp'], { allow: ['POST'] })
      err.headers = { allow: 'POST' }
      throw err
    },

    async postMcp (request, reply) {
      const headers = new Headers()
      for (const name of FORWARDED_HEADERS) {
        const v = request.headers[name]
        if (typeof v === 'string') headers.set(name, v)
      }
      // A fixed origin: the Host header is the client's to choose and is not needed here.
      const webRequest = new Request(new URL(request.url, 'http://localhost'), { method: 'POST', headers })
      const res = await endpoint.handle({
        principal: principalOf(request),
        request: webRequest,
        body: request.body,
        log: request.log
      })
      if (res.status >= 400) throw await transportRefusal(res)
      const type = res.headers.get('content-type')
      if (type !== null) reply.type(type)
      const text = await res.text()
      // The SDK's transport chose the status and serialized the JSON-RPC body: not ours to type.
      return await (reply as FastifyReply).code(res.status).send(text === '' ? undefined : text)
    }
  }
}
