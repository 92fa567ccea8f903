import type { LookupFunction } from 'node:net'
import { build, TEST_DATABASE_URL, type TestApp } from './build.js'

// An app as it runs outside `local` (APP_ENV=staging: the address policy refuses private and
// loopback addresses), its names resolved by a fixed table instead of DNS: how the address-policy
// tests put a company's IdP on a private network, or a name on the cloud's metadata address.

/** A lookup answering each name of `dns` with its IPv4 address, ENOTFOUND for any other. */
export function fixedLookup (dns: ReadonlyMap<string, string>): LookupFunction {
  return ((hostname: string, _o: unknown, cb: (e: Error | null, a: unknown) => void) => {
    const address = dns.get(hostname)
    if (address === undefined) cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), [])
    else cb(null, [{ address, family: 4 }])
  }) as unknown as LookupFunction
}

/** The app under APP_ENV=staging with `dns` for names, PUBLIC_URL https, and `env` besides. */
export async function buildStaging (
  t: Parameters<typeof build>[0], dns: ReadonlyMap<string, string>, env: Record<string, string> = {}
): Promise<TestApp> {
  return await build(t, {
    lookup: fixedLookup(dns),
    env: {
      APP_ENV: 'staging',
      SESSION_SECRET: 's'.repeat(40),
      SMTP_URL: 'smtp://127.0.0.1:9',
      PUBLIC_URL: 'https://workspace.example.com',
      ...env,
      ...(TEST_DATABASE_URL !== null ? { DATABASE_URL: TEST_DATABASE_URL } : {})
    }
  })
}
