import { spawn, type ChildProcess } from 'node:child_process'
import { projectRoot } from '../../src/paths.js'

// The service as a real child process (`node --import tsx src/server.ts`), for the tests that
// kill it with -9 and start it again on the same data: the crash tests of idempotency and webhooks.

/** Polls `fn` until it returns a value (a throw counts as "not yet"); fails after `ms`. */
export async function until<T> (what: string, fn: () => Promise<T | undefined>, ms = 180_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
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
        process.execPath, ['--import', 'tsx', 'src/server.ts'],
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
