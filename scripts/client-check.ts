// `npm run client:check`: a second generator's client must compile. @hey-api/openapi-ts
// generates a fetch client from openapi.yaml into a temporary directory (never committed); a
// small consumer file uses it the way a client would; tsc --noEmit compiles both under strict
// settings. Exits non-zero when generation or compilation fails.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../src/paths.js'
import { consumerCompilerOptions } from './lib/client-build.js'

const bin = (name: string) => join(projectRoot, 'node_modules', '.bin', name)
const dir = mkdtempSync(join(tmpdir(), 'client-check-'))
const keep = process.argv.includes('--keep')

// Typed calls a consumer would write; the @ts-expect-error lines prove the types are not `any`.
const usage = `import { client } from './client/client.gen.js'
import { postUsersInvite, getInvitations, deleteInvitationsInvitationId, postAuthSignup } from './client/index.js'
import type { InviteUserResponse, ErrorResponse, Invitation } from './client/index.js'

client.setConfig({ baseUrl: 'http://127.0.0.1:3000' })

export async function flow (): Promise<string | undefined> {
  const invited = await postUsersInvite({ body: { email: 'a@example.com', role: 'member' } })
  const ok: InviteUserResponse | undefined = invited.data
  const err: ErrorResponse | undefined = invited.error
  if (err !== undefined) return err.code
  const list = await getInvitations({ query: { status: 'pending', limit: 10 } })
  const first: Invitation | undefined = list.data?.items[0]
  if (first !== undefined) await deleteInvitationsInvitationId({ path: { invitationId: first.id } })
  await postAuthSignup({ body: { token: new URL(ok?.invitationUrl ?? 'http://x/').searchParams.get('token') ?? '' } })
  // @ts-expect-error role is 'admin' | 'member'
  await postUsersInvite({ body: { email: 'b@example.com', role: 'owner' } })
  // @ts-expect-error status is an InvitationStatus
  await getInvitations({ query: { status: 'gone' } })
  return ok?.invitationUrl
}
`

// Strict as a consumer would compile it. Not exactOptionalPropertyTypes: the generator's own
// bundled fetch runtime (client/, core/) does not compile under it, whatever the contract says.
const tsconfig = {
  compilerOptions: { ...consumerCompilerOptions, skipLibCheck: false, noEmit: true },
  include: ['client/**/*.ts', 'usage.ts']
}

try {
  execFileSync(
    bin('openapi-ts'),
    [
      '-i', join(projectRoot, 'openapi.yaml'), '-o', join(dir, 'client'), '-c', '@hey-api/client-fetch',
      '--no-log-file', '-s'
    ],
    { stdio: 'inherit' }
  )
  writeFileSync(join(dir, 'usage.ts'), usage)
  // The output is ESM; "type": "module" makes NodeNext treat it so.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
  execFileSync(bin('tsc'), ['-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' })
  process.stdout.write(
    'client:check: the @hey-api/openapi-ts client for openapi.yaml compiles (strict, noUncheckedIndexedAccess)' +
    `${keep ? ` — kept in ${dir}` : ''}\n`
  )
} catch (err) {
  process.stderr.write(`client:check failed: ${(err as Error).message.split('\n')[0] ?? ''}\n`)
  process.exitCode = 1
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true })
}
