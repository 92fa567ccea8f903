import type { Client } from 'openapi-fetch'
import type { components, paths } from '../src/generated/openapi.js'
import { codeWords, fieldErrors, refusalWords, type FieldError } from './words.js'
import { readerLanguage, t } from './i18n.js'

// The console's only way to the service: typed by openapi-fetch's client type over the contract
// (openapi-typescript's src/generated/openapi.ts), so a path, parameter, body or answer that is not
// the contract's fails the typecheck. Same origin, the session cookie; no other host, no private
// route. At run time it is the few lines below, not openapi-fetch's own (a quarter of the
// console's budget on the wire, for middleware, serializers and body types the console never uses):
// path parameters put in, the query as `name=value` pairs, a JSON body, the JSON answer read as
// openapi-fetch reads it (`data` on success, else `error`; nothing for an empty answer). A file
// (the logo, `putWorkspaceBrandingLogo`) is the body itself.

export type Schemas = components['schemas']

interface Init { params?: { path?: Record<string, unknown>, query?: Record<string, unknown> }, body?: unknown }

function send (method: string) {
  return async (path: string, init: Init = {}) => {
    const url = new URL(path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(init.params?.path?.[name]))), location.origin)
    for (const [name, value] of Object.entries(init.params?.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value))
    const response = await fetch(url, {
      method,
      credentials: 'same-origin',
      // A file (the workspace's logo) goes as itself, with its own type; anything else as JSON.
      ...(init.body === undefined
        ? {}
        : init.body instanceof Blob
          ? { body: init.body, headers: { 'content-type': init.body.type } }
          : { body: JSON.stringify(init.body), headers: { 'content-type': 'application/json' } })
    })
    const text = await response.text()
    if (response.ok) return { data: text === '' ? undefined : JSON.parse(text) as unknown, response }
    let error: unknown = text
    try { error = JSON.parse(text) } catch {}
    return { error, response }
  }
}

export const api = {
  GET: send('GET'), POST: send('POST'), PUT: send('PUT'), PATCH: send('PATCH'), DELETE: send('DELETE')
} as unknown as Pick<Client<paths>, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>

/** A failed call, as the person using the console should read it. */
export interface Problem {
  status: number
  code: string | undefined
  /** A sentence built from the ErrorResponse (and Retry-After where there is one). */
  text: string
  /** Seconds to wait, from Retry-After (429 and 503). */
  retryAfter: number | undefined
  /** The fields it concerns, each with what to enter instead (words.ts), shown beside the field. */
  fields: FieldError[]
}

export type Outcome<T> = { ok: true, data: T, response: Response } | { ok: false, problem: Problem }

function seconds (response: Response | undefined): number | undefined {
  const header = response?.headers.get('retry-after')
  if (header === null || header === undefined) return undefined
  const n = Number(header)
  if (Number.isFinite(n)) return Math.max(0, Math.ceil(n))
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

/**
 * When to try again, after `wait` seconds, as the values of the messages that say it
 * (`problemRetryIn`, `resultOverBudget`): seconds under 90, else minutes, and the
 * time of day in the reader's language.
 */
export function retryValues (wait: number): { unit: 'seconds' | 'minutes', n: number, time: string } {
  const time = new Date(Date.now() + wait * 1000).toLocaleTimeString(readerLanguage(), { hour: '2-digit', minute: '2-digit', second: '2-digit' })
  return wait < 90 ? { unit: 'seconds', n: wait, time } : { unit: 'minutes', n: Math.ceil(wait / 60), time }
}

/** The sentence for an ErrorResponse: its own message, with what to do next where it matters. */
function problemOf (response: Response | undefined, error: unknown): Problem {
  const status = response?.status ?? 0
  const body = (typeof error === 'object' && error !== null ? error : {}) as Partial<Schemas['ErrorResponse']>
  const message = typeof body.message === 'string' ? body.message.replace(/\.?$/, '.') : undefined
  const retryAfter = seconds(response)
  const code = typeof body.code === 'string' ? body.code : undefined
  const fields = fieldErrors(code, body.details)
  let text: string
  // The service's own `message` stays as it wrote it (English, for programs too); the console's
  // sentences around it are the reader's.
  if (response === undefined) text = t('problemUnreachable')
  else if (status === 429) {
    text = t('problemRetryIn', { message: message ?? t('problemTooMany'), ...retryValues(retryAfter ?? 60) })
  } else if (status === 503) {
    const said = message ?? t('problemUnavailable')
    text = retryAfter === undefined ? t('problemRetry', { message: said }) : t('problemRetryIn', { message: said, ...retryValues(retryAfter) })
  } else if (status === 401) text = t('problemSignedOut')
  else if (status === 403 && code === 'FORBIDDEN') text = t('problemAdminsOnly', { message: message ?? t('problemForbidden') })
  else if (fields.length > 0 && fields.every(f => f.words !== '')) text = fields.map(f => f.words).join(' ')
  else text = codeWords(code) ?? message ?? t('problemOther', { status })
  return { status, code, text, retryAfter, fields }
}

/** Await an openapi-fetch call; a network failure becomes a Problem too. */
export async function call<T> (
  request: Promise<{ data?: T, error?: unknown, response: Response }>
): Promise<Outcome<T>> {
  try {
    const { data, error, response } = await request
    if (response.ok) return { ok: true, data: data as T, response }
    await refusalWords()
    return { ok: false, problem: problemOf(response, error) }
  } catch {
    return { ok: false, problem: problemOf(undefined, undefined) }
  }
}
