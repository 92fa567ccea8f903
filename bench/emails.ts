import { randomBytes } from 'node:crypto'
import { invitationEmail } from '../src/invitations/email.js'
import { LOCALES } from '../src/i18n/locales.js'
import type { Reader } from '../src/emails/shell.js'
import { quantile } from './directory.js'

// `npm run bench -- --emails`: CPU per rendered invitation e-mail (issue 54), per language. The
// first e-mail of a language reads and compiles its messages (src/i18n/messages.ts caches them per
// language and time zone); every later one fills values into the cached formats and the shell. Each
// language: the first render timed alone, then `count` renders (a fresh link and expiry each),
// each timed with process.cpuUsage; the median and p90 after the first, target ≤ 1 ms (the
// median, and the mean), printed MET / MISS.

const TARGET_MS = 1
const write = (s: string): void => { process.stdout.write(s) }

function cpuMsOf (fn: () => void): number {
  const before = process.cpuUsage()
  fn()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

export function runEmails (o: { count: number }): boolean {
  let met = true
  write(`CPU per rendered invitation e-mail, ${o.count} per language after the first (target ≤ ${TARGET_MS} ms)\n`)
  for (const locale of LOCALES) {
    const reader: Reader = {
      locale,
      timeZone: 'Europe/Berlin',
      branding: {
        displayName: 'Acme Robotics',
        logoUrl: 'https://app.example.test/branding/logos/0f.png',
        accentColor: '#7c3aed',
        senderName: 'Acme via Workspace'
      }
    }
    const render = (): void => {
      invitationEmail(reader, {
        to: `${randomBytes(4).toString('hex')}@example.com`,
        inviter: 'Ada Lovelace',
        role: 'member',
        link: `https://app.example.test/signup?token=${randomBytes(32).toString('base64url')}`,
        expiresAt: new Date(Date.now() + Math.floor(Math.random() * 7 * 86_400_000))
      })
    }
    const first = cpuMsOf(render)
    const times: number[] = []
    const started = process.cpuUsage()
    for (let i = 0; i < o.count; i++) times.push(cpuMsOf(render))
    const total = process.cpuUsage(started)
    const mean = (total.user + total.system) / 1000 / o.count
    times.sort((a, b) => a - b)
    const median = quantile(times, 0.5)
    const ok = median <= TARGET_MS && mean <= TARGET_MS
    met &&= ok
    write(`  ${locale}: first ${first.toFixed(2)} ms; then median ${median.toFixed(3)} ms, ` +
      `p90 ${quantile(times, 0.9).toFixed(3)} ms, mean ${mean.toFixed(3)} ms  ${ok ? 'MET' : 'MISS'}\n`)
  }
  return met
}
