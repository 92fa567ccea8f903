import type { LightMyRequestResponse } from 'fastify'
import { build, type BuildOptions, type SignedIn, type TestApp } from './build.js'
import { createApiKey } from './mcp.js'
import { contractProblems } from './contract.js'

// A workspace with an admin and the directory's key (scope scim), and SCIM requests as a directory
// sends them (application/scim+json, Bearer key), each checked against openapi.yaml.

export const SCIM_TYPE = 'application/scim+json'
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'

export interface ScimFixture {
  h: TestApp
  admin: SignedIn
  key: { id: string, secret: string }
  /** A SCIM request with the directory's key; `problems` lists where the answer leaves the contract. */
  scim(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<ScimAnswer>
}

interface ScimAnswer { res: LightMyRequestResponse, status: number, body: any, problems: string[] }

export async function scimFixture (
  t: { teardown(fn: () => unknown): void }, opts: BuildOptions = {}
): Promise<ScimFixture> {
  const h = await build(t, opts)
  const admin = await h.signIn({ role: 'admin' })
  const key = await createApiKey(h, admin, 'Okta', ['scim'])
  const scim: ScimFixture['scim'] = async (method, url, body, headers = {}) => {
    const res = await h.inject({
      method: method as 'GET',
      url,
      headers: {
        authorization: `Bearer ${key.secret}`,
        ...(body !== undefined ? { 'content-type': SCIM_TYPE } : {}),
        ...headers
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {})
    })
    const parsed = res.body === '' ? undefined : safeJson(res.body)
    let problems: string[]
    try {
      problems = contractProblems(method, url, res)
    } catch (err) {
      problems = [(err as Error).message]
    }
    return { res, status: res.statusCode, body: parsed, problems }
  }
  return { h, admin, key, scim }
}

function safeJson (s: string): unknown {
  try { return JSON.parse(s) } catch { return s }
}

/** Whether `body` is a SCIM error with this status (and scimType, when given). */
export function isScimError (body: any, status: number, scimType?: string): boolean {
  return body !== null && typeof body === 'object' && Array.isArray(body.schemas) && body.schemas[0] === ERROR_SCHEMA &&
    body.status === String(status) && (scimType === undefined || body.scimType === scimType)
}
