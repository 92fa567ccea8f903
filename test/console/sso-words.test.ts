import t from 'tap'
import { deref, operations } from '../helpers/contract.js'
import { readFileSync } from 'node:fs'
import { codeWords, fieldErrors } from '../../console/words.js'
import { setWords, type Words } from '../../console/i18n.js'

// Every refusal the SSO screen can meet has words (console/words.ts), read from the contract: each
// code of the examples of every answer of the operations on /api/sso/connections, beside the field
// its `details` names; the validator's refusals by the field they list. A code the contract adds to
// those answers fails here until the console has words for it. The codes every screen meets
// (session, role, size, rate, availability) are api.ts's sentences. The words are English's
// (src/i18n/catalogues/en/console-refusals.json, with the shell's console.json), as a reader whose
// language is English reads them.

const english = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../src/i18n/catalogues/en/${name}.json`, import.meta.url), 'utf8')) as Words
setWords({ ...english('console'), ...english('console-refusals') }, 'en')

const EVERY_SCREEN = new Set([
  'UNAUTHENTICATED', 'FORBIDDEN', 'CSRF_REJECTED', 'INSUFFICIENT_SCOPE', 'API_KEY_NOT_ALLOWED', 'NOT_FOUND',
  'INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE', 'SSO_REQUIRED'
])

interface Example { code?: string, details?: { field?: string, errors?: unknown[] } }

const examples: Array<{ where: string, value: Example }> = []
for (const { method, path, op } of operations()) {
  if (!path.startsWith('/api/sso/connections') || path.includes('/saml/')) continue
  for (const [status, ref] of Object.entries(op.responses)) {
    const response = deref<{ content?: Record<string, { examples?: Record<string, unknown> }> }>(ref)
    for (const [name, example] of Object.entries(response.content?.['application/json']?.examples ?? {})) {
      const value = deref<{ value?: Example }>(example).value
      if (value?.code !== undefined) examples.push({ where: `${method} ${path} ${status} ${name}`, value })
    }
  }
}

t.ok(examples.some(e => e.value.code === 'SSO_DOMAIN_TAKEN'), 'the SSO operations\' examples are read')

for (const { where, value } of examples) {
  const code = value.code as string
  if (EVERY_SCREEN.has(code)) continue
  const fields = fieldErrors(code, value.details)
  if (code === 'VALIDATION_FAILED') {
    // The form's fields (the body); a path's id comes from the service, never typed.
    for (const f of fields.filter(f => !f.field.startsWith('path.'))) t.not(f.words, 'Check this value.', `${where}: words for ${f.field}`)
    t.equal(fields.length, value.details?.errors?.length, `${where}: each listed field`)
    continue
  }
  const words = codeWords(code)
  t.ok(words, `${where}: ${code} has words`)
  if (value.details?.field !== undefined) {
    t.same(fields, [{ field: value.details.field, words }], `${where}: ${code} beside ${value.details.field}`)
  }
}
