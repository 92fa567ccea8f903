import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../paths.js'

// The console's script, its chunks and its styles under content-hashed names (console.<hash>.js /
// .css), as `npm run build` publishes them (scripts/lib/console-publish.ts): each beside its brotli
// and gzip forms, named by dist/console/assets.json. A name is its content, so an answer may be cached for
// a year and never revalidated (`immutable`), and a file read once is kept for the process.

/** Where `npm run build` writes the console (console/ → dist/console/). */
export const consoleBuildDir = join(projectRoot, 'dist', 'console')
export const ASSET_MANIFEST = 'assets.json'
/** A hashed asset's name (GET /static/{asset} answers 404 for any other). */
export const HASHED_ASSET = /^[a-z][a-z0-9-]*\.[0-9a-f]{16}\.(js|css)$/
export const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The hashed names of the console's files: the script and styles the page names, and every file. */
export interface AssetManifest {
  'console.js': string
  'console.css': string
  /** All of the build's files: the two above and the chunks the script imports (each screen's). */
  files: string[]
}

let manifest: { mtimeMs: number, names: AssetManifest } | undefined

/** The current manifest, read again when the build rewrote it (npm run console:watch). */
export function consoleAssets (): AssetManifest {
  const path = join(consoleBuildDir, ASSET_MANIFEST)
  const { mtimeMs } = statSync(path)
  if (manifest?.mtimeMs !== mtimeMs) {
    manifest = { mtimeMs, names: JSON.parse(readFileSync(path, 'utf8')) as AssetManifest }
  }
  return manifest.names
}

export type Encoding = 'br' | 'gzip' | 'identity'
const ENCODINGS: Encoding[] = ['br', 'gzip', 'identity']
const SUFFIX: Record<Encoding, string> = { br: '.br', gzip: '.gz', identity: '' }

/**
 * The encoding to send for an Accept-Encoding header (RFC 9110 §12.5.3): brotli, else gzip,
 * among those the client accepts with a q above 0 (`*` stands for the ones it does not name);
 * identity unless refused.
 */
export function chooseEncoding (acceptEncoding: string | undefined): Encoding {
  if (acceptEncoding === undefined) return 'identity'
  const q = new Map<string, number>()
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    if (name === '') continue
    const qParam = params.map(p => p.trim()).find(p => p.startsWith('q='))
    const value = qParam === undefined ? 1 : Number(qParam.slice(2))
    q.set(name, Number.isFinite(value) ? value : 0)
  }
  const accepted = (e: Encoding): boolean => (q.get(e) ?? q.get('*') ?? (e === 'identity' ? 1 : 0)) > 0
  return ENCODINGS.find(accepted) ?? 'identity'
}

export interface HashedAsset { type: string, body: Buffer, encoding: Encoding }

const files = new Map<string, Buffer | null>()

function readOnce (path: string): Buffer | null {
  let body = files.get(path)
  if (body === undefined) {
    try { body = readFileSync(path) } catch { body = null }
    files.set(path, body)
  }
  return body
}

/** A published asset in the best encoding the client accepts; null: no such asset. */
export function hashedAsset (name: string, acceptEncoding: string | undefined): HashedAsset | null {
  if (!HASHED_ASSET.test(name)) return null
  const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'application/javascript; charset=utf-8'
  const path = join(consoleBuildDir, name)
  const encoding = chooseEncoding(acceptEncoding)
  const encoded = encoding === 'identity' ? null : readOnce(path + SUFFIX[encoding])
  if (encoded !== null) return { type, body: encoded, encoding }
  // A compressed form missing (a directory built by hand) falls back to the file itself.
  const plain = readOnce(path)
  return plain === null ? null : { type, body: plain, encoding: 'identity' }
}
