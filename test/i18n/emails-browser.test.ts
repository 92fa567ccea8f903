import t from 'tap'
import { join } from 'node:path'
import { launchChromium, skipWithoutChromium as skip } from '../helpers/browser.js'
import { invitationEmail } from '../../src/invitations/email.js'
import { LOCALES } from '../../src/i18n/locales.js'
import type { Reader } from '../../src/emails/shell.js'

// The invitation e-mail's HTML part in every language, as Chromium lays it out at 600 px (a desktop
// client's reading pane) and 360 px (a phone): axe finds no serious or critical fault, nothing is
// wider than the screen, the button is a link with the invitation, and Arabic runs right to left.
// The page has no network: an e-mail without a logo loads nothing. With EMAIL_SCREENSHOTS=<dir>
// each is also saved as email-invitation-<locale>-<width>.png.

const LINK = 'https://app.example.test/signup?token=Xb1c2d3e4f5g6h7i8j9k0lAmBnCoDpEqFrGsHtIuJvKwL'

t.test('the invitation e-mail in each language, at 600 and 360 px: axe, no overflow, direction', { skip, timeout: 300_000 }, async t => {
  const browser = await launchChromium(t)
  const context = await browser.newContext({ javaScriptEnabled: true })
  await context.route('**/*', async route => { await route.abort() })
  const page = await context.newPage()
  const { AxeBuilder } = await import('@axe-core/playwright')
  const shots = process.env.EMAIL_SCREENSHOTS
  for (const locale of LOCALES) {
    const reader: Reader = {
      locale,
      timeZone: 'Europe/Berlin',
      branding: { displayName: 'Acme Robotics', logoUrl: null, accentColor: '#7c3aed', senderName: 'Acme via Workspace' }
    }
    const mail = invitationEmail(reader, {
      to: 'hanako@example.com', inviter: 'Ada Lovelace', role: 'member', link: LINK, expiresAt: new Date('2026-12-14T17:00:00Z')
    })
    const lines = mail.text.split('\n')
    const label = lines[lines.indexOf(LINK) - 1] ?? ''
    for (const width of [600, 360]) {
      await page.setViewportSize({ width, height: 800 })
      await page.setContent(mail.html)
      const result = await new AxeBuilder({ page }).setLegacyMode().analyze()
      const bad = result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
      t.same(bad.map(v => `${v.id}: ${v.help}`), [], `${locale} at ${width} px: no serious or critical axe violation`)
      const root = page.locator('html')
      const layout = {
        scrollWidth: await root.evaluate(el => el.scrollWidth),
        dir: await root.getAttribute('dir'),
        lang: await root.getAttribute('lang'),
        direction: await page.locator('h1').evaluate(el => el.ownerDocument.defaultView?.getComputedStyle(el).direction),
        // The button: the link named by the label the text part writes above the link.
        button: await page.getByRole('link', { name: label, exact: true }).getAttribute('href')
      }
      t.ok(layout.scrollWidth <= width, `${locale} at ${width} px: nothing wider than the screen (${layout.scrollWidth})`)
      t.equal(layout.lang, locale)
      t.equal(layout.dir, locale === 'ar' ? 'rtl' : 'ltr')
      t.equal(layout.direction, locale === 'ar' ? 'rtl' : 'ltr', `${locale}: laid out ${layout.dir}`)
      t.equal(layout.button, LINK, `${locale}: the button opens the invitation`)
      if (shots !== undefined && shots !== '') {
        await page.screenshot({ path: join(shots, `email-invitation-${locale}-${width}.png`), fullPage: true })
      }
    }
  }
})
