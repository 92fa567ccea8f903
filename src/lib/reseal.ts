import { openWithKey, sealWith, type Keyring } from './crypto.js'

// Re-encryption of one store of sealed values under its keyring's current key (npm run
// secrets:reencrypt): each value is opened with whichever key sealed it and, unless the current
// key did, sealed again and written back only if the row still holds what was read (a service
// running meanwhile may have rotated it: its new value is already current).

/** A store's rows, page by page, and how to write one value back. */
export interface SealedStore<Id> {
  /** Its name in the report. */
  store: string
  ring: Keyring
  /** Each row's sealed values by column (null: nothing sealed there). */
  rows: AsyncIterable<{ id: Id, values: Readonly<Record<string, string | null>> }>
  /** The context each column's values are bound to. */
  contexts: Readonly<Record<string, (id: Id) => string>>
  /** Replaces `from` by `to`; false when the row no longer holds `from`. */
  write(id: Id, column: string, from: string, to: string): Promise<boolean>
}

export interface ResealCount {
  store: string
  /** Sealed again under the current key. */
  rewritten: number
  /** Already under the current key. */
  current: number
  /** Opened by no key of the ring: left as they are, lost once their key is gone. */
  unreadable: number
}

export async function resealStore<Id> (s: SealedStore<Id>): Promise<ResealCount> {
  const count: ResealCount = { store: s.store, rewritten: 0, current: 0, unreadable: 0 }
  for await (const { id, values } of s.rows) {
    for (const [column, context] of Object.entries(s.contexts)) {
      const sealed = values[column]
      if (sealed === null || sealed === undefined) continue
      let opened: { plaintext: string, current: boolean }
      try {
        opened = openWithKey(s.ring, sealed, context(id))
      } catch {
        count.unreadable++
        continue
      }
      if (opened.current) { count.current++; continue }
      if (await s.write(id, column, sealed, sealWith(s.ring, opened.plaintext, context(id)))) count.rewritten++
      else count.current++ // rewritten meanwhile by the service, under the current key
    }
  }
  return count
}

/** Keyset pages of a table until one comes back short. */
export async function * pages<Row> (
  page: (after: Row | null, limit: number) => Promise<readonly Row[]>, limit = 500
): AsyncGenerator<Row> {
  let after: Row | null = null
  for (;;) {
    const rows = await page(after, limit)
    yield * rows
    if (rows.length < limit) return
    after = rows[rows.length - 1] as Row
  }
}
