import { readFileSync } from 'node:fs'
import { join } from 'node:path'

// Small conversions of one variable, and the freezing of the result.

export type TrustProxy = boolean | number | string

/** Fastify's trustProxy: true/false, a hop count, or the addresses (CIDR list, named ranges). */
export function parseTrustProxy (v: string): TrustProxy {
  if (v === 'true') return true
  if (v === 'false') return false
  if (/^[0-9]+$/.test(v)) return Number(v)
  return v
}

/** Base URLs are joined with paths that start with '/': no trailing slash. */
export function baseUrl (url: string): string {
  return url.replace(/\/+$/, '')
}

export function readVersion (root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
}

export function deepFreeze<T> (o: T): T {
  if (o !== null && typeof o === 'object' && !Buffer.isBuffer(o)) {
    for (const v of Object.values(o)) deepFreeze(v)
    Object.freeze(o)
  }
  return o
}
