// Preloaded (`node --import`) into a service a test starts, to see where it writes: every file or
// folder the process creates, writes, renames, copies or removes through node:fs is recorded, its
// absolute path one a line, in $WRITE_OBSERVER_LOG. It only observes: every call goes on unchanged
// (test/ops/npm-start.test.ts: the service never writes under node_modules).
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { resolve } from 'node:path'

const log = process.env.WRITE_OBSERVER_LOG
const append = fs.appendFileSync
let recording = false
const record = path => {
  // appendFileSync writes through fs.writeFileSync: its own write is not recorded.
  if (recording || !(typeof path === 'string' || path instanceof URL || Buffer.isBuffer(path))) return
  recording = true
  try {
    append(log, `${resolve(path instanceof URL ? path.pathname : String(path))}\n`)
  } catch {} finally {
    recording = false
  }
}
/** Flags that may write: anything but plain reading. */
const writes = flags => flags !== undefined && flags !== 'r' && flags !== 'rs' && flags !== 0 &&
  !(typeof flags === 'number' && (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT)) === 0)

// The path written is the first argument, or the second (rename, copy, link).
const FIRST = ['writeFile', 'appendFile', 'mkdir', 'mkdtemp', 'rm', 'rmdir', 'unlink', 'truncate', 'utimes', 'chmod']
const SECOND = ['rename', 'copyFile', 'cp', 'link', 'symlink']

function wrap (target, name, pathOf) {
  const original = target[name]
  if (typeof original !== 'function') return
  target[name] = function (...args) {
    const path = pathOf(args)
    if (path !== undefined) record(path)
    return original.apply(this, args)
  }
}

if (log !== undefined) {
  for (const target of [fs, fs.promises]) {
    for (const base of FIRST) {
      for (const name of [base, `${base}Sync`]) wrap(target, name, args => args[0])
    }
    for (const base of SECOND) {
      for (const name of [base, `${base}Sync`]) wrap(target, name, args => args[1])
    }
    for (const name of ['open', 'openSync']) wrap(target, name, args => writes(args[1]) ? args[0] : undefined)
  }
  wrap(fs, 'createWriteStream', args => args[0])
  syncBuiltinESMExports()
}
