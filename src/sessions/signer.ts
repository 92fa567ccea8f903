// A port of its own module: src/ports.ts names it, and the session service is built from Ports.

/** The JWT half of a session; @fastify/jwt provides it, pinned to HS256 with iss/aud/exp required. */
export interface SessionTokenSigner {
  sign(payload: { sid: string }): string
  /** Returns the payload or throws for any invalid, expired or foreign token. */
  verify(token: string): { sid?: unknown }
}
