import nodemailer from 'nodemailer'

// The baseline of `npm run bench -- --batch` (bench/batch.ts): a plain nodemailer loop, a pool of
// 20 connections to the relay, N messages handed over at once. Reports its rate and CPU time to the parent.
// argv: relay URL, N, address prefix.

const [url, n, prefix] = process.argv.slice(2) as [string, string, string]
const transport = nodemailer.createTransport({ url, pool: true, maxConnections: 20, maxMessages: Infinity })
const started = performance.now()
const cpuBefore = process.cpuUsage()
await Promise.all(Array.from({ length: Number(n) }, async (_, i) => await transport.sendMail({
  from: 'Workspace <no-reply@bench.test>',
  to: `${prefix}-${i}@bench.test`,
  subject: 'You are invited to Bench',
  text: `Join: http://127.0.0.1/signup?token=${i}`,
  html: `<p>Join: <a href="http://127.0.0.1/signup?token=${i}">the workspace</a></p>`
})))
const rate = Number(n) / ((performance.now() - started) / 1000)
const cpu = process.cpuUsage(cpuBefore)
transport.close()
process.send?.({ rate, cpuUs: cpu.user + cpu.system })
process.disconnect?.()
