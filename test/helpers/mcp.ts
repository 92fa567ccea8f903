import type { LightMyRequestResponse } from 'fastify'
import type { SignedIn, TestApp } from './build.js'
import { apiKeyScopes } from '../../src/generated/api-key-scopes.js'

// API keys and MCP requests, as the suites that exercise the key-authenticated endpoint need them.

export const MCP = '/api/mcp'
/** Streamable HTTP: clients accept both JSON and an event stream. */
export const MCP_ACCEPT = 'application/json, text/event-stream'

/** Every scope of the contract's catalogue (`ApiKeyScope`). */
export const ALL_SCOPES: string[] = apiKeyScopes.map(s => s.scope)

/**
 * A new API key made by `admin` through POST /api/api-keys: its id and the secret (shown once).
 * It holds every scope unless `scopes` says otherwise.
 */
export async function createApiKey (
  h: TestApp,
  admin: SignedIn,
  name = 'test key',
  scopes: readonly string[] = ALL_SCOPES
): Promise<{ id: string, secret: string }> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { name, scopes }
  })
  if (res.statusCode !== 201 && res.statusCode !== 200) {
    throw new Error(
    `POST /api/api-keys: ${res.statusCode} ${res.body}`
    )
  }
  return res.json()
}

let rpcId = 0

/** One JSON-RPC request to the MCP endpoint with `key` (tools/list unless told otherwise). */
export async function mcpRequest (
  h: TestApp,
  key: string,
  method = 'tools/list',
  params?: unknown,
  headers: Record<string, string> = {}
): Promise<LightMyRequestResponse> {
  return await h.inject({
    method: 'POST',
    url: MCP,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
    payload: { jsonrpc: '2.0', id: ++rpcId, method, ...(params !== undefined ? { params } : {}) }
  })
}
