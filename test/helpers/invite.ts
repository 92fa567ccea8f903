// The contract requires `role` on POST /api/users/invite; suites that are not about it send the
// member role unless the body names one (or is not an object: then it is sent as given).
export function withRole (body: unknown): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && !('role' in body)
    ? {
        role: 'member',
        ...body
      }
    : body
}
