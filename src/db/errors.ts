/** PostgreSQL's unique_violation (SQLSTATE 23505), as raised by pg and by PGlite alike. */
export function isUniqueViolation (err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505'
}

/** PostgreSQL's foreign_key_violation (SQLSTATE 23503): the row referred to is gone. */
export function isForeignKeyViolation (err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23503'
}
