/** Time source. Everything that compares against "now" takes one, so tests can move time. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests can move; starts at the real time unless told otherwise. */
export class FakeClock implements Clock {
  #t: number
  constructor (start: Date = new Date()) { this.#t = start.getTime() }
  now (): Date { return new Date(this.#t) }
  advance (ms: number): void { this.#t += ms }
  set (d: Date): void { this.#t = d.getTime() }
}
