/** Whether a string is a UUID (any version, either case): what a uuid column accepts. */
export function isUuid (s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)
}
