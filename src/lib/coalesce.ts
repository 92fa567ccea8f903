/**
 * Group commit: `write` takes many items at once; the function returned takes one and resolves
 * once a write that held it succeeded (or rejects with its error). While one write runs, the items
 * that arrive wait and go together into the next, so items are written as soon as they come when
 * they come slowly, and many to a statement when they come fast — never two writes at once.
 */
export function coalescing<T> (write: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let waiting: Array<{ item: T, resolve: () => void, reject: (err: unknown) => void }> = []
  let writing = false
  const next = (): void => {
    if (writing || waiting.length === 0) return
    const these = waiting
    waiting = []
    writing = true
    write(these.map(w => w.item)).then(
      () => { for (const w of these) w.resolve() },
      (err: unknown) => { for (const w of these) w.reject(err) }
    ).finally(() => { writing = false; next() })
  }
  return async item => {
    await new Promise<void>((resolve, reject) => {
      waiting.push({ item, resolve, reject })
      next()
    })
  }
}
