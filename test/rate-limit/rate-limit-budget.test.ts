import t from 'tap'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { createInvitationBudget } from '../../src/invitations/budget.js'
import type { InvitationBudget } from '../../src/ports/invitation-budget.js'
import { MemoryWindowCounter, RedisWindowCounter, type WindowCounter } from '../../src/lib/window-counter.js'
import { TEST_REDIS_URL } from '../helpers/build.js'

// The invitation-e-mail budget over both window counters: take draws one e-mail, refund gives
// one back (the invitation service refunds when nothing was handed to SMTP or the IdP), a refused
// take is not a draw, and a refund never goes below zero nor opens a window.

async function refusal (
  budget: InvitationBudget,
  ws: string
): Promise<{ code?: string, headers?: Record<string, string> } | null> {
  try {
    await budget.take(ws)
    return null
  } catch (err) {
    return err as { code?: string, headers?: Record<string, string> }
  }
}

function budgetSuite (
  name: string,
  counter: (teardown: (fn: () => unknown) => void) => Promise<WindowCounter>,
  skip: string | false = false
): void {
  t.test(name, { skip }, async t => {
    const budget = createInvitationBudget(await counter(fn => { t.teardown(fn) }), 2)
    const ws = `ws-${randomBytes(6).toString('hex')}`
    await budget.refund(ws)
    t.equal(await refusal(budget, ws), null, '1st e-mail')
    t.equal(await refusal(budget, ws), null, '2nd e-mail: a refund before any take gave nothing extra')
    const spent = await refusal(budget, ws)
    t.equal(spent?.code, 'RATE_LIMITED', 'the 3rd is refused')
    t.ok(Number(spent?.headers?.['retry-after']) > 3000, 'Retry-After: the rest of the hour')
    t.equal((await refusal(budget, ws))?.code, 'RATE_LIMITED', 'and again')

    await budget.refund(ws)
    t.equal(await refusal(budget, ws), null, 'one refund frees exactly one e-mail (refused takes did not count)')
    t.equal((await refusal(budget, ws))?.code, 'RATE_LIMITED')
    t.equal(await refusal(budget, `${ws}-other`), null, 'another workspace has its own budget')
  })
}

budgetSuite('memory counter', async () => new MemoryWindowCounter())

budgetSuite('Redis counter', async teardown => {
  const redis = new Redis(TEST_REDIS_URL as string, { keyPrefix: `test:budget:${randomBytes(6).toString('hex')}:` })
  teardown(async () => {
    const keys = await redis.keys(`${redis.options.keyPrefix as string}*`)
    for (const k of keys) await redis.del(k.slice((redis.options.keyPrefix as string).length))
    redis.disconnect()
  })
  if (redis.status !== 'ready') await once(redis, 'ready')
  return new RedisWindowCounter(redis, 'invitation-emails:')
}, TEST_REDIS_URL === null ? 'TEST_REDIS_URL is not set' : false)
