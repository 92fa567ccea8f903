// A port: src/ports/index.ts names it; @fastify/jwt implements it (src/plugins/auth.ts).

/** The JWT half of a session; @fastify/jwt provides it, pinned to HS256 with iss/aud/exp required. */
export interface SessionTokenSigner {
  sign(payload: { sid: string }): string
  /** Returns the payload or throws for any invalid, expired or foreign token. */
  verify(token: string): { sid?: unknown }
}
