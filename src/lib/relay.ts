/**
 * A one-way notice relay for the composition root: services built early tell it, a service
 * built later (the Slack app, which is built from them) listens once it exists. Before anyone
 * listens, a notice goes nowhere; a listener's throw is the teller's to catch.
 */
export function createRelay<T> (): { tell: (notice: T) => void, listen: (listener: (notice: T) => void) => void } {
  let listener: ((notice: T) => void) | null = null
  return {
    tell: notice => { listener?.(notice) },
    listen: l => { listener = l }
  }
}

/**
 * The same for a notice the teller waits on (a job that sends it, retried when it throws): `tell`
 * resolves when the listener has done its work, and rejects with the listener's error.
 */
export function createAsyncRelay<T> (): {
  tell: (notice: T) => Promise<void>
  listen: (listener: (notice: T) => Promise<void>) => void
} {
  let listener: ((notice: T) => Promise<void>) | null = null
  return {
    tell: async notice => { await listener?.(notice) },
    listen: l => { listener = l }
  }
}
