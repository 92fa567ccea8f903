import { StartupError } from './error.js'

/** The first descriptor a socket-activating supervisor passes (systemd's SD_LISTEN_FDS_START). */
const FIRST_FD = 3

/**
 * The listening socket systemd passed (socket activation: `workspace@.socket` in
 * docs/operating.md), as its descriptor; null when none was passed. Held by systemd, the socket
 * outlives each process of the service: a connection the kernel completed while one process
 * stopped listening waits in the socket's queue for the next, where a socket of the process's
 * own is closed with it and resets every connection still queued (issue 45 item 9;
 * test/ops/accept-queue.test.ts).
 *
 * systemd's protocol: LISTEN_FDS sockets from descriptor 3 on, for the process LISTEN_PID names.
 * Named for another process, they are not here: `npm start` passes no descriptor on to its child
 * (the service), so a unit that runs npm instead of node is refused with the reason. The
 * variables are removed, so nothing this process starts takes them for its own.
 */
export function listenSocket (env: Record<string, string | undefined>, pid: number): number | null {
  const count = env.LISTEN_FDS
  const owner = env.LISTEN_PID
  delete env.LISTEN_FDS
  delete env.LISTEN_PID
  delete env.LISTEN_FDNAMES
  if (count === undefined) return null
  if (owner !== String(pid)) {
    throw new StartupError(
      'LISTEN_FDS', `systemd passed its socket to process ${owner ?? '(none named)'}, not to this one (${pid})`,
      'start node itself in the unit (ExecStart=/usr/bin/node … dist/src/server.js), not npm'
    )
  }
  if (count !== '1') {
    throw new StartupError(
      'LISTEN_FDS', `systemd passed ${count} sockets, and the service listens on one`,
      'give its socket unit a single ListenStream='
    )
  }
  return FIRST_FD
}
