import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { freePort } from '../../scripts/lib/free-port.js'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { projectRoot } from '../../src/paths.js'
import { deref } from '../helpers/contract.js'
import { examplesOf, operations, parameterExample, type Operation } from '../helpers/contract-examples.js'

// What a client author gets from `npx prism mock openapi.yaml`: one Prism process serves the
// contract on a loopback port; every operation is called once with its example request and must
// answer its declared success status with the example body, and every other example (error
// examples included) must come back when asked for with Prism's `Prefer: code=…, example=…`.

async function startPrism (tt: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const port = await freePort()
  const child = spawn(
    join(projectRoot, 'node_modules', '.bin', 'prism'), ['mock', 'openapi.yaml', '-h', '127.0.0.1', '-p', String(port)],
    { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  tt.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  })
  const output: string[] = []
  child.stderr.on('data', (d: Buffer) => output.push(d.toString()))
  // Prism prints one line per route, then "Prism is listening on http://…" when it serves.
  const listening = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', line => {
      output.push(line)
      if (line.includes('Prism is listening on')) resolve()
    })
    child.once(
      'exit', code => { reject(new Error(`prism exited (${String(code)}) before listening:\n${output.join('\n')}`)) }
    )
  })
  await listening
  return `http://127.0.0.1:${port}`
}

// Prism checks that credentials are present (not that they are valid).
const CREDENTIALS: Record<string, Record<string, string>> = {
  sessionCookie: {
    cookie: 'service_session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiJleGFtcGxlIn0.c2lnbmF0dXJl'
  },
  apiKey: { authorization: 'Bearer wsk_0rv3kzc787hn_Q9vT2xLk7RbN4pWc8ZyF1sHd6JmA3eUgK0iOtXqVnB5' },
  slackSignature: {
    'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    'x-slack-request-timestamp': '1763891100'
  }
}

/** The operation's example request: path, query and header parameters and the first body example. */
function exampleRequest (op: Operation): { url: string, init: RequestInit } {
  let path = op.path
  const query = new URLSearchParams()
  const headers: Record<string, string> = { ...CREDENTIALS[Object.keys(op.security[0] ?? {})[0] ?? ''] }
  for (const p of op.parameters) {
    const example: unknown = parameterExample(p)
    const value = String(example)
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(value))
    // An array query parameter is form-exploded (OpenAPI's default): ?types=a&types=b.
    if (p.in === 'query') {
      for (const item of Array.isArray(example) ? example : [example]) query.append(p.name, String(item))
    }
    if (p.in === 'header') headers[p.name.toLowerCase()] = value
  }
  const init: RequestInit = { method: op.method, headers, redirect: 'manual' }
  const body = op.requestBody?.content['application/json']
  const form = op.requestBody?.content['application/x-www-form-urlencoded']
  if (body !== undefined) {
    headers['content-type'] = 'application/json'
    init.body = JSON.stringify(examplesOf(body as never)[0]?.value)
  } else if (form !== undefined) {
    // Slack's commands and interactions: the example's fields, form-encoded as Slack sends them.
    headers['content-type'] = 'application/x-www-form-urlencoded'
    init.body = new URLSearchParams(examplesOf(form as never)[0]?.value as Record<string, string>).toString()
  } else {
    // A file as the body (the workspace's logo): the first type declared, its example as text.
    const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? []
    if (type !== undefined) {
      headers['content-type'] = type
      init.body = String(examplesOf(media as never)[0]?.value ?? '')
    }
  }
  // The MCP transport requires both; Prism picks the first type the contract declares.
  headers.accept = op.operationId === 'postMcp' ? 'application/json, text/event-stream' : '*/*'
  const qs = query.toString()
  return { url: path + (qs === '' ? '' : `?${qs}`), init }
}

/** The status Prism answers by default: the lowest 2xx, else the lowest 3xx. */
function defaultStatus (op: Operation): string {
  const statuses = Object.keys(op.responses).sort()
  return statuses.find(s => s.startsWith('2')) ?? statuses.find(s => s.startsWith('3')) ?? statuses[0] as string
}

async function bodyOf (res: Response): Promise<unknown> {
  const text = await res.text()
  // JSON and its +json kinds (SCIM's), not NDJSON: a stream of documents, read as the text it is.
  const json = /^application\/(?:[\w.-]+\+)?json\b/.test(res.headers.get('content-type') ?? '')
  return json && text !== '' ? JSON.parse(text) : text.trimEnd()
}

// Prism drops the trailing blank line that ends a server-sent event; text is compared without it.
const textTrimmed = (v: unknown) => typeof v === 'string' ? v.trimEnd() : v

/** The first example of each response header that has one, as Prism sends it. */
function exampleHeaders (response: Operation['responses'][string] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, header] of Object.entries(response?.headers ?? {})) {
    const value = examplesOf(deref(header))[0]?.value
    if (value !== undefined) out[name.toLowerCase()] = String(value)
  }
  return out
}

const headersOf = (
  res: Response,
  names: string[]
) => Object.fromEntries(names.map(n => [n, res.headers.get(n) ?? '(absent)']))

t.test('Prism mocks every operation of the contract with its examples', async t => {
  const base = await startPrism(t)
  let served = 0
  let total = 0
  for (const op of operations()) {
    const { url, init } = exampleRequest(op)
    const status = defaultStatus(op)
    const res = await fetch(base + url, init)
    const body = await bodyOf(res)
    const content = Object.values(op.responses[status]?.content ?? {})[0]
    const expected = content === undefined ? '' : examplesOf(content as never)[0]?.value
    const asDeclared = t.equal(
      String(res.status), status,
      `${op.method} ${url} → ${status}${res.status >= 400 ? ' ' + JSON.stringify(body) : ''}`
    )
    const headers = exampleHeaders(op.responses[status])
    t.same(headersOf(res, Object.keys(headers)), headers, `${op.operationId}: ${status} headers are their examples`)
    if (t.same(
      body, textTrimmed(expected), `${op.operationId}: the first ${status} example, not a generated body`
    ) && asDeclared) served++

    // Every example of every response, on request.
    for (const [code, response] of Object.entries(op.responses)) {
      for (const [type, media] of Object.entries(response.content ?? {})) {
        for (const ex of examplesOf(media as never)) {
          total++
          const prefer = `code=${code}` + (ex.name === 'example' ? '' : `, example=${ex.name}`)
          const r = await fetch(
            base + url, { ...init, headers: { ...init.headers as Record<string, string>, accept: type, prefer } }
          )
          t.equal(String(r.status), code, `${op.operationId} Prefer: ${prefer} → ${code}`)
          t.same(await bodyOf(r), textTrimmed(ex.value), `${op.operationId} ${code} ${ex.name}: the example`)
          const headers = exampleHeaders(response)
          t.same(headersOf(r, Object.keys(headers)), headers, `${op.operationId} ${code}: headers are their examples`)
        }
      }
    }
  }
  t.comment(`${served} operations answered their example; ${total} examples served on request`)
})
