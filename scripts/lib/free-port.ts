import { createServer } from 'node:net'
import { once } from 'node:events'

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a child process or a peer that must
 * be told its port before it starts (nginx, Prism, the service itself). The OS picks it; another
 * process could take it before it is used, which on loopback in a test run does not happen.
 */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
