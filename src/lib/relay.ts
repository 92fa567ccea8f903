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
