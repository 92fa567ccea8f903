import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Test } from 'tap'
import { projectRoot } from '../../src/paths.js'

// The service as a real child process (`node --import <the tests' loader> src/server.ts`), for the
// tests that kill it with -9 and start it again on the same data: the crash tests of idempotency
// and webhooks.

/**
 * Node's arguments that run a project .ts file in a child process, as tap runs the tests
 * (test/helpers/ts-loader.mjs): `spawn(process.execPath, [...tsImport, 'src/server.ts'])`.
 */
export const tsImport: readonly string[] = ['--import', pathToFileURL(join(projectRoot, 'test/helpers/ts-loader.mjs')).href]

/**
 * Polls `fn` every `every` ms until it returns a value (`undefined` and a throw count as "not
 * yet"); fails after `ms`, naming what it waited for and the last error it saw. The one wait of
 * the tests: a condition awaited, never a fixed sleep.
 */
export async function until<T> (
  what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 180_000, every = 100
): Promise<T> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    const v = await Promise.resolve().then(fn).catch((err: unknown) => { last = err; return undefined })
    if (v !== undefined) return v
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last === undefined ? '' : ` (last: ${String((last as Error).message ?? last)})`}`)
    }
    await new Promise(resolve => setTimeout(resolve, every))
  }
}

/** Starts services on demand and kills whatever is still running when the test file ends. */
export function serviceProcesses (t: { teardown(fn: () => unknown): void }): {
  start(port: number, env: Record<string, string>): Promise<ChildProcess>
} {
  const children: ChildProcess[] = []
  t.teardown(() => { for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL') })
  return {
    async start (port, env) {
      const child = spawn(
        process.execPath, [...tsImport, 'src/server.ts'],
        { cwd: projectRoot, env: { ...env, PORT: String(port) }, stdio: 'ignore' }
      )
      children.push(child)
      await until(
        `the service on port ${port}`,
        async () => (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200 ? true : undefined
      )
      return child
    }
  }
}

/**
 * The environment every crash test's service shares: no logs, a fixed session secret (the
 * restarted service must read the sessions the first one wrote), PATH for its child processes.
 */
export function crashEnv (env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', SESSION_SECRET: 's'.repeat(40), ...env }
}

/**
 * The first admin of a new installation, as an operator makes one: the create-admin script (run
 * before the service holds the embedded database; no e-mail sent). Returns the signup link.
 */
export async function adminLink (env: Record<string, string>, workspace: string): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [
      ...tsImport, 'scripts/create-admin.ts', '--email', 'admin@example.com', '--workspace', workspace
    ], { cwd: projectRoot, env: { ...env, SMTP_URL: '' }, timeout: 300_000 }, (err, stdout) => {
      if (err !== null) reject(err); else resolve(stdout.trim().split('\n').pop() ?? '')
    })
  })
}

/** The signup `link` opens, on the service at `base`: the admin's session cookie. */
export async function signUp (t: Test, base: string, link: string): Promise<string> {
  const signup = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: new URL(link).searchParams.get('token') })
  })
  t.equal(signup.status, 201, 'the first admin signs up')
  return (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
}

/** Sends `signal` (kill -9 by default) and resolves once the process has exited. */
export async function stopProcess (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const exited = new Promise(resolve => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(null); else child.once('exit', resolve)
  })
  child.kill(signal)
  await exited
}
