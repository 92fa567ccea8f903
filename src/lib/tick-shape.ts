import { createHook } from 'node:async_hooks'

// Node's process.nextTick queues each callback in a "tick object" built as an object literal with
// computed keys ({ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }). V8 keeps
// the hidden classes (maps) of that shape alive only while some object of it lives. When a full
// garbage collection runs while no tick is queued — the embedded database's start runs several,
// and V8's memory reducer runs one in a server idle after its start — the shape is collected and
// made again, and from then on V8's optimized nextTick, and the stream
// functions that inline it (every request ends its IncomingMessage through several ticks), define
// each tick's properties through V8's runtime instead of inline: about 38k instructions more per
// request, a tenth of a health request's CPU time on PGlite, for the life of the process
// (`npm run bench -- --instructions`, docs/performance.md). One tick object kept for the life of
// the process keeps the shape, and its transitions, alive.
//
// Measured on the service as users run it (`node dist/src/server.js`, 20k health requests profiled
// after 20k, 2026-11-27, two runs each): nextTick's own share of the busy CPU samples was 3.3 and
// 5.7 % without it on PGlite, 0.3 % with it; on PostgreSQL 0.7 and 0.9 % without, 0.5 % with —
// within a run's noise, so it was kept on the embedded database only. Counted on PostgreSQL
// (callgrind, 2026-11-29, `npm run bench -- --instructions`): 38.6k of a health request's 169.6k
// instructions were nextTick's runtime path without it, 0.3k with it. src/server.ts keeps it on both.

const kept: object[] = []

/**
 * Keeps a tick object of each kind Node makes (without arguments, with arguments) for the life of
 * the process, as early as possible: before anything that runs a full garbage collection. The
 * async hook that hands them over is enabled only for the two calls. Returns what it keeps.
 */
export function keepTickShape (): readonly object[] {
  if (kept.length > 0) return kept
  const hook = createHook({
    init (_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') kept.push(resource)
    }
  })
  hook.enable()
  try {
    process.nextTick(() => {})
    process.nextTick((_: unknown) => {}, null)
  } finally {
    hook.disable()
  }
  return kept
}
