// The one statement shape of the lists whose rows lapse (invitations, invite requests): newest
// first, keyset-paginated on (created_at, id), filtered by the status as read now — a pending row
// past its expires_at reads as expired, so ?status=pending leaves it out and ?status=expired
// includes it. The other statuses (accepted, revoked; approved, denied) are what is stored.

export interface StatusPageFilter {
  status?: string | undefined
  now: Date
  limit: number
  /** The keyset position of the last row of the previous page. */
  before?: { createdAt: Date, id: string } | undefined
}

/**
 * `SELECT columns FROM table WHERE scope AND <status> AND <keyset> ORDER BY … LIMIT`: `scope`
 * is SQL over its own parameters $1…$n (`scopeParams`); the filter's follow them.
 */
export function statusPageQuery (
  select: { columns: string, from: string, scope: string, scopeParams: readonly unknown[] },
  filter: StatusPageFilter
): { text: string, params: unknown[] } {
  const params = [...select.scopeParams]
  const param = (value: unknown): string => `$${params.push(value)}`
  const status = param(filter.status ?? null)
  const now = param(filter.now)
  const beforeAt = param(filter.before?.createdAt ?? null)
  const beforeId = param(filter.before?.id ?? null)
  const limit = param(filter.limit)
  const text = `SELECT ${select.columns} FROM ${select.from}
      WHERE ${select.scope}
        AND (${status}::text IS NULL
             OR (${status} = 'pending' AND status = 'pending' AND expires_at > ${now})
             OR (${status} = 'expired' AND (status = 'expired' OR (status = 'pending' AND expires_at <= ${now})))
             OR (${status} NOT IN ('pending', 'expired') AND status = ${status}))
        AND (${beforeAt}::timestamptz IS NULL OR (created_at, id) < (${beforeAt}, ${beforeId}::uuid))
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`
  return { text, params }
}
