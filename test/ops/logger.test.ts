import t from 'tap'
import { Writable } from 'node:stream'
import { build } from '../helpers/build.js'
import { loggerOptions, redactUrl, RequestLogController } from '../../src/logger.js'

// URL redaction reads parameter names as the server does (percent-decoded, `+` as space, any
// case), so an encoded name such as `tok%65n` is redacted like `token`.

t.test('an encoded parameter name does not slip past the redaction (captured log stream)', async t => {
  let out = ''
  const stream = new Writable({ write (chunk, _enc, cb) { out += String(chunk); cb() } })
  const h = await build(t, { logger: { ...loggerOptions('info'), stream } })
  const urls = [
    '/signup?tok%65n=tok_encoded_name_secret',
    '/signup?%74%6F%6B%65%6E=tok_fully_encoded_secret',
    '/signup?TOKEN=tok_upper_case_secret',
    '/api/oauth/callback?x=1&c%6Fde=code_encoded_secret&st%61te=state_encoded_secret',
    '/signup?a=1&token=tok_second_param_secret#frag'
  ]
  for (const url of urls) await h.inject({ method: 'GET', url })
  for (const secret of [
    'tok_encoded_name_secret', 'tok_fully_encoded_secret', 'tok_upper_case_secret', 'code_encoded_secret',
    'state_encoded_secret', 'tok_second_param_secret'
  ]) {
    t.notOk(out.includes(secret), `log does not contain ${secret}`)
  }
  t.match(out, /"url":"\/signup\?tok%65n=\[REDACTED\]"/, 'the name is kept as sent, the value redacted')
})

t.test('redactUrl keeps what is not secret and survives malformed encodings', async t => {
  t.equal(redactUrl('/api/invitations?status=pending&limit=5'), '/api/invitations?status=pending&limit=5')
  t.equal(
    redactUrl('/x?%E0%A4%A=1&token=abc'), '/x?%E0%A4%A=1&token=[REDACTED]',
    'an undecodable name is left alone, the rest still redacted'
  )
  t.equal(redactUrl('/x?to+ken=1&client_secret=s'), '/x?to+ken=1&client_secret=[REDACTED]')
  t.equal(redactUrl('/x?code'), '/x?code', 'a name without a value has nothing to hide')
  t.equal(redactUrl('/no-query'), '/no-query')
})

// A request's lines go through its own child logger (Fastify's, pino as shipped): its id bound, the
// redaction applied.
t.test('a request logs with its request id, its cookie redacted', async t => {
  let out = ''
  let children = 0
  const stream = new Writable({ write (chunk, _enc, cb) { out += String(chunk); cb() } })
  const h = await build(t, {
    logger: { ...loggerOptions('debug'), stream, onChild: () => { children++ } }
  })
  const res = await h.inject({ method: 'GET', url: '/api/no-such-path', headers: { cookie: 'service_session=sess_secret' } })
  t.equal(res.statusCode, 404)
  const lines = out.trim().split('\n').map(l => JSON.parse(l) as { reqId?: string, msg?: string })
  const ofRequest = lines.filter(l => l.reqId !== undefined)
  t.ok(ofRequest.length >= 2, 'the request wrote its lines (incoming, the 404, completed)')
  t.equal(new Set(ofRequest.map(l => l.reqId)).size, 1, 'all bound to the one request id')
  t.match(ofRequest[0]?.reqId, /^[0-9a-f-]{36}$/)
  t.equal(children, 1, 'one child for the request')
  t.notOk(out.includes('sess_secret'), 'the cookie is redacted')
})

// Fastify's "incoming request" and "request completed" are info lines: below info they are
// dropped, and Fastify's own controller still built their objects and read the response time
// on every request. The service's (src/logger.ts RequestLogController) skips them while info is
// off, and keeps a failed response's line.
t.test('below info, the per-request lines are not built; a response that failed is still logged', async t => {
  const { default: Fastify, LogController } = await import('fastify')
  const lines: Array<{ msg?: string, level?: number }> = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
  const at = (level: string) => {
    let reads = 0
    const log = Fastify({ logger: { level, stream } }).log
    const request = { log, id: 'r1' } as never
    const reply = {
      log,
      statusCode: 200,
      get elapsedTime () { reads++; return 1.5 }
    } as never
    return { request, reply, reads: () => reads }
  }

  const warn = at('warn')
  const ours = new RequestLogController()
  ours.incomingRequest(warn.request, warn.reply)
  ours.requestCompleted(null, warn.request, warn.reply)
  t.equal(warn.reads(), 0, 'at warn the response time is not read')
  t.equal(lines.length, 0, 'and nothing written')
  new LogController().requestCompleted(null, warn.request, warn.reply)
  t.equal(warn.reads(), 1, 'where Fastify\'s own controller reads it for a line that is dropped')

  ours.requestCompleted(new Error('socket hang up'), warn.request, warn.reply)
  t.equal(lines.length, 1, 'a response that failed is logged at warn')
  t.equal(lines[0]?.msg, 'request errored')

  const info = at('info')
  ours.incomingRequest(info.request, info.reply)
  ours.requestCompleted(null, info.request, info.reply)
  t.same(lines.slice(1).map(l => l.msg), ['incoming request', 'request completed'], 'at info both lines, as Fastify writes them')
})
