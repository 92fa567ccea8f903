import nodemailer from 'nodemailer'
import { randomBytes } from 'node:crypto'
import { invitationEmail } from '../src/invitations/email.js'
import type { Reader } from '../src/emails/shell.js'

// The baseline of `npm run bench -- --batch` (bench/batch.ts): a plain nodemailer loop, a pool of
// 20 connections to the relay, N messages handed over at once. Reports its rate and CPU time to the parent.
// The messages are the service's own invitation e-mail (src/invitations/email.ts: text and HTML,
// ≈ 4 kB in the e-mail shell, a 43-character token in the link), so the ratio compares the service with sending the
// same e-mails, not with sending shorter ones: nodemailer's cost grows with the message.
// argv: relay URL, N, address prefix.

const [url, n, prefix] = process.argv.slice(2) as [string, string, string]
const transport = nodemailer.createTransport({ url, pool: true, maxConnections: 20, maxMessages: Infinity })
const expiresAt = new Date(Date.now() + 7 * 86_400_000)
const reader: Reader = {
  locale: 'en',
  timeZone: 'UTC',
  branding: { displayName: 'Bench', logoUrl: null, accentColor: null, senderName: 'Bench via Workspace' }
}
const started = performance.now()
const cpuBefore = process.cpuUsage()
await Promise.all(Array.from({ length: Number(n) }, async (_, i) => {
  const mail = invitationEmail(reader, {
    to: `${prefix}-${i}@bench.test`,
    inviter: 'admin@bench.test',
    role: 'member',
    link: `http://127.0.0.1/signup?token=${randomBytes(32).toString('base64url')}`,
    expiresAt
  })
  const { to, subject, text, html } = mail
  await transport.sendMail({ from: 'Workspace <no-reply@bench.test>', to, subject, text, html })
}))
const rate = Number(n) / ((performance.now() - started) / 1000)
const cpu = process.cpuUsage(cpuBefore)
transport.close()
process.send?.({ rate, cpuUs: cpu.user + cpu.system })
process.disconnect?.()
