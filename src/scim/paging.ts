// SCIM's index-based paging (RFC 7644 §3.4.2.4): 1-based startIndex (below 1 read as 1), count
// at most MAX_COUNT (more is read as the maximum, which the RFC allows), in the resource's stable order.

/** The most resources one SCIM list answer carries (ServiceProviderConfig's filter.maxResults). */
export const MAX_COUNT = 100

export interface ListQuery {
  filter?: string | undefined
  startIndex?: number | undefined
  count?: number | undefined
  attributes?: string | undefined
  excludedAttributes?: string | undefined
}

export function pageOf (
  query: Pick<ListQuery, 'startIndex' | 'count'>
): { startIndex: number, offset: number, limit: number } {
  const startIndex = Math.max(1, Math.min(query.startIndex ?? 1, Number.MAX_SAFE_INTEGER))
  const limit = Math.max(0, Math.min(query.count ?? MAX_COUNT, MAX_COUNT))
  return { startIndex, offset: Math.min(startIndex - 1, 2 ** 31 - 1), limit }
}
