import { createHash } from 'node:crypto'
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { Metafile, OutputFile } from 'esbuild'
import { minify } from 'terser'
import { ASSET_MANIFEST, HASHED_ASSET, consoleBuildDir, type AssetManifest } from '../../src/console/assets.js'

// The console's build published (scripts/lib/console-build.ts builds it): the entry, each
// screen's chunk and the chunks they share, and the styles, each under a content-hashed name
// (console.<16 hex digits of its SHA-256>.js or .css, the names GET /static/{asset} serves, src/
// console/assets.ts), beside its brotli (.br) and gzip (.gz) forms compressed once here at their
// best levels; then dist/console/assets.json naming them, which the console page reads. A name is
// its content: a file once published never changes.
//
// A chunk names the chunks it imports, so a file is named after the files it imports are: its
// content then holds their final names, and a change anywhere renames every file that leads to it.

/** Writes `name` atomically: a scratch file renamed into place (a reader never sees half of one). */
async function writeAtomic (dir: string, name: string, data: Buffer | string): Promise<void> {
  const scratch = join(dir, `.${name}.${process.pid}.tmp`)
  await writeFile(scratch, data)
  await rename(scratch, join(dir, name))
}

/**
 * esbuild's output minified once more by terser (two compress passes, names by frequency, the
 * module's top-level names too): about 0.9 kB less after brotli than esbuild alone.
 */
async function minifyScript (name: string, code: string): Promise<string> {
  const terser = { module: true, compress: { passes: 2 }, mangle: true, format: { comments: false } }
  const minified = (await minify(code, terser)).code
  if (minified === undefined) throw new Error(`terser returned nothing for ${name}`)
  return minified
}

async function writeCompressed (dir: string, name: string, body: Buffer): Promise<void> {
  await writeAtomic(dir, `${name}.br`, brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length
    }
  }))
  await writeAtomic(dir, `${name}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }))
  await writeAtomic(dir, name, body)
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Publishes an esbuild build (`write: false`, with its metafile) into `outdir`: every file under
 * its hashed name, then the manifest. Hashed files of neither this build nor the one before are
 * removed (a page loaded just before a rebuild still finds its files, its chunks included).
 */
export async function publishConsole (
  files: OutputFile[], metafile: Metafile, outdir = consoleBuildDir
): Promise<AssetManifest> {
  const built = new Map(files.map(f => [basename(f.path), f]))
  const imports = new Map(Object.entries(metafile.outputs).map(([path, output]) => [
    basename(path), output.imports.filter(i => i.external !== true).map(i => basename(i.path))
  ]))
  const published = new Map<string, string>()
  const underway = new Set<string>()

  /** `name` (esbuild's) published after the files it imports; its hashed name. */
  async function publish (name: string): Promise<string> {
    const done = published.get(name)
    if (done !== undefined) return done
    if (underway.has(name)) throw new Error(`console build: an import circle through ${name}`)
    underway.add(name)
    const file = built.get(name)
    if (file === undefined) throw new Error(`console build: ${name} was not built`)
    let body = Buffer.from(file.contents)
    if (name.endsWith('.js')) {
      let code = await minifyScript(name, file.text)
      for (const imported of imports.get(name) ?? []) {
        const hashed = await publish(imported)
        // esbuild writes each import as "./<its name>", a name no other text of the file has.
        const reference = new RegExp(`(["'])\\./${escape(imported)}\\1`, 'g')
        if (!reference.test(code)) throw new Error(`console build: ${name} does not name ${imported}`)
        code = code.replace(reference, `$1./${hashed}$1`)
      }
      body = Buffer.from(code)
    }
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
    const hashed = `console.${hash}.${name.endsWith('.css') ? 'css' : 'js'}`
    await writeCompressed(outdir, hashed, body)
    published.set(name, hashed)
    underway.delete(name)
    return hashed
  }

  const manifest: AssetManifest = {
    'console.js': await publish('console.js'),
    'console.css': await publish('console.css'),
    files: []
  }
  manifest.files = [...new Set(published.values())].sort()
  const unreached = [...built.keys()].filter(name => !published.has(name))
  if (unreached.length > 0) throw new Error(`console build: ${unreached.join(', ')} reached from no entry`)
  const previous = await readFile(join(outdir, ASSET_MANIFEST), 'utf8')
    .then(text => namedBy(JSON.parse(text) as Partial<AssetManifest>), () => [])
  await writeAtomic(outdir, ASSET_MANIFEST, JSON.stringify(manifest))
  const keep = new Set([...manifest.files, ...previous])
  for (const file of await readdir(outdir)) {
    const base = file.replace(/\.(br|gz)$/, '')
    if (HASHED_ASSET.test(base) && !keep.has(base)) await rm(join(outdir, file), { force: true })
  }
  return manifest
}

/** Every file a manifest names (one written before chunks named only its script and styles). */
function namedBy (manifest: Partial<AssetManifest>): string[] {
  return [manifest['console.js'], manifest['console.css'], ...manifest.files ?? []].filter(n => typeof n === 'string')
}
