import { PGlite } from '@electric-sql/pglite'

/**
 * PostgreSQL settings of the embedded database, chosen for memory: PGlite keeps the whole server
 * (shared memory included) in one WebAssembly heap that grows and never shrinks, and it zeroes its
 * shared memory at start, so every MB of shared memory is a resident MB of the service for life.
 * Measured on an existing DATA_DIR (Node 20, PGlite 0.5): with initdb's defaults the heap holds
 * 145 MB of shared memory and 152 MB of it is resident; with these, 22 MB and 29 MB.
 *
 * - shared_buffers: initdb writes 128MB (its largest probe). PGlite serves one connection over a
 *   database of tens of MB whose files stay in the OS page cache, so a small pool of pages costs
 *   reads from that cache, never from disk. 16MB holds the hot pages: indexes and the catalogs.
 *   wal_buffers follows it (-1: 1/32 of it, 512kB).
 * - max_connections: 100 sizes per-backend shared arrays (PGPROC, lock table, snapshots) for 100
 *   backends; PGlite runs one, in single-user mode. 20 saves ~2 MB and leaves the lock table
 *   (max_locks_per_transaction 64 × all backends and worker slots) far above what a migration or
 *   pg-boss's schema script takes in one transaction.
 * - maintenance_work_mem: CREATE INDEX and VACUUM sort in memory up to it (default 64MB). Heap
 *   growth is for good, so an index build over a large table in a future migration would leave
 *   that much behind; with 16MB a bigger sort spills to temporary files instead.
 * - log_startup_progress_interval: PGlite's single-user backend never leaves the startup phase
 *   this timer belongs to, so its 10 s timer was armed again at every expiry for the life of the
 *   process: a wake-up every 10 s for nothing, and a process that had finished everything else
 *   (a test file holding an open database) never exited. 0 arms none.
 * Left at their defaults: work_mem (4MB, per sort or hash, taken only when a query needs it) and
 * temp_buffers (8MB, only for temporary tables, which the service does not use).
 *
 * Given on PostgreSQL's command line at every start, they override postgresql.conf, so a data
 * directory created by an earlier version (shared_buffers = 128MB in its file) runs with them too;
 * initdb also gets them, so a new cluster bootstraps small and its postgresql.conf says the same.
 */
const PGLITE_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  shared_buffers: '16MB',
  max_connections: '20',
  maintenance_work_mem: '16MB',
  log_startup_progress_interval: '0'
})

const settingArgs = Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`])

/** PGlite's single-user start parameters with the settings above (`startParams` replaces its defaults). */
export const pgliteStartParams: readonly string[] = [...PGlite.defaultStartParams, ...settingArgs]

/** initdb's own arguments: the settings above (`initdb -c`: used while bootstrapping, written to postgresql.conf). */
export const pgliteInitdbParams: readonly string[] = settingArgs
