import sjson from 'secure-json-parse'
import { serviceError } from './errors.js'

const FORBIDDEN = ['body contains a forbidden key (__proto__ or constructor)']

/**
 * Parse a JSON request body. Malformed or empty → INVALID_JSON; `__proto__` or
 * `constructor.prototype` keys (prototype poisoning) → VALIDATION_FAILED naming the problem.
 */
export function parseJsonBody (body: Buffer): unknown {
  if (body.length === 0) throw serviceError('INVALID_JSON')
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw serviceError('INVALID_JSON')
  }
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    if (err instanceof SyntaxError && /prototype/i.test(err.message)) {
      throw serviceError(
        'VALIDATION_FAILED', FORBIDDEN,
        { errors: [{ in: 'body', field: '', message: 'contains a forbidden key (__proto__ or constructor)' }] }
      )
    }
    throw serviceError('INVALID_JSON')
  }
}
