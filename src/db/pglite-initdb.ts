import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { pgliteInitdbParams, pgliteStartParams } from './pglite-settings.js'

// Creating a cluster (initdb) is the embedded database's most memory-hungry moment, and PGlite's
// memory is WebAssembly memory, which never shrinks. Its initdb starts a second PostgreSQL in a
// WebAssembly heap of its own (128 MB at least, all of it written: initdb resets the heap between
// its steps from a copy, another 128 MB), and then copies the new data directory into the
// database being opened as a tar archive. Measured on Node 20 (PGlite 0.5, the settings of
// pglite-settings.ts): ≈ 770 MB peak for PGlite.create on a new directory.
//
// Two things bring that down, and keep it out of the service's process:
// - The cluster is created in a child process, which hands all of it back to the system when it
//   exits: the service then opens the finished directory as on any later start. (A worker thread
//   freed the WebAssembly memory but not the C heap its allocations had grown: the service kept
//   ≈ 130 MB more than after a restart, and the thread's peak counted as the service's own.)
// - The child's PGlite writes the data directory straight to disk: its file system is PGlite's
//   MemoryFS with the directory mounted on PGDATA through Emscripten's NODEFS (as PGlite's own
//   NodeFS does), and for a MemoryFS PGlite points initdb at the database's PGDATA instead of
//   copying the result through tar archives. (Were that to change in a later PGlite, the files
//   would still arrive there, by the copy.)
// - The child compiles PostgreSQL's WebAssembly with V8's baseline compiler only (--liftoff-only):
//   initdb runs each part of it a few times, too few for optimised code to pay for its compilation,
//   whose memory the process would keep (≈ 60 MB). Measured: ≈ 470 MB peak in the child, for
//   about as long as before.
// initdb writes into a staging directory beside the data directory; the result is moved into
// place when it is complete, PG_VERSION last, so an interrupted first start leaves no half
// cluster that a later start would take for a database.

/** PGlite's PGDATA inside its virtual file system (src/initdb.ts of @electric-sql/pglite). */
const PGDATA = '/pglite/data'

// The child's program: an ES module (--input-type), its arguments as JSON in argv[1].
const CHILD = `
const { PGlite, MemoryFS } = await import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))})
const { dir, startParams, initDbStartParams } = JSON.parse(process.argv[1])
class DataDirFS extends MemoryFS {
  async init (pg, opts) {
    this.pg = pg
    const mount = mod => { mod.FS.mkdirTree('${PGDATA}'); mod.FS.mount(mod.NODEFS, { root: dir }, '${PGDATA}') }
    return { emscriptenOpts: { ...opts, preRun: [...(opts.preRun ?? []), mount] } }
  }
}
const db = await PGlite.create({ fs: new DataDirFS(), startParams, initDbStartParams })
await db.close()`

/** Runs initdb for the data directory `dir` (which holds no cluster) in a child process. */
export async function initDataDir (dir: string): Promise<void> {
  const staging = `${dir}.initdb`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    const args = JSON.stringify({
      dir: staging, startParams: pgliteStartParams, initDbStartParams: pgliteInitdbParams
    })
    const child = spawn(process.execPath, ['--liftoff-only', '--input-type=module', '-e', CHILD, args], {
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-4000) })
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject)
      child.once('exit', resolve)
    })
    if (code !== 0) throw new Error(`initdb exited with code ${code}: ${stderr.trim()}`)
    // Leftovers of an interrupted move (there is no PG_VERSION, so no cluster) go first.
    for (const name of readdirSync(dir)) {
      if (name !== 'lock.pid') rmSync(join(dir, name), { recursive: true, force: true })
    }
    const names = readdirSync(staging).sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'))
    for (const name of names) renameSync(join(staging, name), join(dir, name))
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}
