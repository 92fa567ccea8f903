import { randomBytes } from 'node:crypto'

/** Whether a string is a UUID (any version, either case): what a uuid column accepts. */
export function isUuid (s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)
}

/**
 * A UUIDv7 source (RFC 9562 §5.7, with §6.2 method 1: a 12-bit counter in rand_a): the time in
 * ms, then random bits, so ids sort by time and reveal nothing else — unlike a sequence shared by
 * every workspace, whose gaps told a workspace how active the others were. Monotonic per source:
 * within one ms (or if the clock steps back) the counter goes on from the last id, so the ids of
 * one process sort in the order they were made; it starts each ms at a random value below 2048.
 */
export function uuidV7Source (): (at: Date) => string {
  let lastMs = -1
  let counter = 0
  return at => {
    let ms = at.getTime()
    if (ms > lastMs) {
      lastMs = ms
      counter = randomBytes(2).readUInt16BE() & 0x7ff
    } else {
      ms = lastMs
      counter++
      if (counter > 0xfff) { lastMs = ++ms; counter = 0 }
    }
    const b = randomBytes(16)
    b.writeUIntBE(ms, 0, 6)
    b.writeUInt16BE(0x7000 | counter, 6)
    b[8] = 0x80 | ((b[8] ?? 0) & 0x3f)
    const h = b.toString('hex')
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
}
