import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import { errorBody, toServiceError } from '../error-response.js'
import { argumentsError, type McpTool } from './tools.js'

// The MCP endpoint, stateless: every HTTP request gets a fresh server and transport bound to the
// caller's principal, answers as JSON (enableJsonResponse) and is closed. The low-level Server is
// used instead of McpServer on purpose: tool schemas come from openapi.yaml as JSON Schema (not
// zod), and a tool error carries the REST API's `code`, which McpServer's own validation cannot.

// The SDK (and zod, which it brings: about 1.2 MB of modules) is loaded by the first MCP request,
// not at start-up, which does not need it; later requests reuse the loaded modules.
type Sdk = typeof import('@modelcontextprotocol/sdk/server/index.js') &
  typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js') &
  typeof import('@modelcontextprotocol/sdk/types.js')
let sdk: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => (sdk ??= Promise.all([
  import('@modelcontextprotocol/sdk/server/index.js'),
  import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  import('@modelcontextprotocol/sdk/types.js')
]).then(([server, transport, types]) => ({ ...server, ...transport, ...types })))

export interface McpEndpoint {
  readonly tools: readonly McpTool[]
  /** One JSON-RPC POST: the web Request carries the headers; `body` is the already parsed JSON. */
  handle(call: { principal: Principal, request: Request, body: unknown, log: Logger }): Promise<Response>
}

/** A tool error: `isError` with the ErrorResponse JSON ({message, code, details?}) as its text. */
function toolError (err: unknown, log: Logger, tool: string): CallToolResult {
  const { error, internal } = toServiceError(err)
  if (internal || error.statusCode >= 500) log.error({ err, tool }, 'MCP tool failed')
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(error)) }] }
}

export function createMcpEndpoint (deps: { tools: McpTool[], version: string }): McpEndpoint {
  const { tools, version } = deps
  const byName = new Map(tools.map(t => [t.name, t]))
  const listing = tools.map(t => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    outputSchema: t.outputSchema
  }))

  function serverFor (mcp: Sdk, principal: Principal, log: Logger): Server {
    const { Server, CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } = mcp
    const server = new Server({ name: 'workspace-service', version }, { capabilities: { tools: {} } })
    // A key sees the tools its scopes allow; calling another one answers INSUFFICIENT_SCOPE.
    const allowed = listing.filter((_, i) => tools[i]?.allows(principal) === true)
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: allowed as never }))
    server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
      const tool = byName.get(req.params.name)
      // An unknown tool is a protocol error (JSON-RPC -32602), as the specification asks.
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`)
      const args = req.params.arguments ?? {}
      if (!tool.validate(args)) return toolError(argumentsError(tool.validate), log, tool.name)
      try {
        const result = await tool.run(principal, tool.withDefaults(args))
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
      } catch (err) {
        return toolError(err, log, tool.name)
      }
    })
    return server
  }

  return {
    tools,
    async handle ({ principal, request, body, log }) {
      const mcp = await loadSdk()
      // JSON-RPC 2.0: an empty batch is an Invalid Request (the SDK would accept it with 202).
      if (Array.isArray(body) && body.length === 0) {
        const error = {
          jsonrpc: '2.0',
          id: null,
          error: { code: mcp.ErrorCode.InvalidRequest, message: 'Invalid Request: an empty batch' }
        }
        return new Response(JSON.stringify(error), { status: 400, headers: { 'content-type': 'application/json' } })
      }
      // The key acts through this door: audit rows and events say `mcp`.
      const key = principal.key
      const viaMcp = key === undefined ? principal : { ...principal, key: { ...key, door: 'mcp' as const } }
      const server = serverFor(mcp, viaMcp, log)
      // No sessionIdGenerator: stateless mode (no Mcp-Session-Id; any instance can answer).
      const transport = new mcp.WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
      transport.onerror = err => { log.debug({ err: err.message }, 'MCP transport rejected a request') }
      try {
        await server.connect(transport)
        // In JSON mode the promise settles once every response is ready; the body is a string.
        return await transport.handleRequest(request, { parsedBody: body })
      } finally {
        await transport.close().catch(() => {})
        await server.close().catch(() => {})
      }
    }
  }
}
