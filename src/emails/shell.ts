import type { MailMessage } from '../ports/mailer.js'
import type { Branding } from '../workspaces/branding.js'
import { DEFAULT_ACCENT, escapeHtml } from '../lib/html.js'
import { textDirection, type Locale } from '../i18n/locales.js'
import { translate, type MessageValues } from '../i18n/messages.js'

// The one shell every e-mail is written in (issue 54): a table layout Outlook, Gmail and Apple Mail
// lay out alike, `lang` and `dir` of the reader's language, layout tables marked
// role="presentation" (a screen reader does not read them out as data), explicit colours on every
// box (a client's dark mode then has nothing to guess, and the color-scheme meta lets it adapt),
// no remote content but the workspace's logo and no tracking. The text part says the same as the
// HTML part, block by block. Every word comes from the `email` catalogue in the reader's language;
// the messages are compiled once per language and zone (src/i18n/messages.ts), so an e-mail is
// values filled into cached formats and strings joined. A workspace without an accent has the
// service's (DEFAULT_ACCENT, src/lib/html.ts), as its pages do.

/** Who reads the e-mail and how: their language, the workspace's time zone and look. */
export interface Reader {
  locale: Locale
  timeZone: string
  branding: Branding
}

/** One block of an e-mail's body, in order. */
type Block =
  | { kind: 'text', text: string }
  | { kind: 'list', items: string[] }
  | { kind: 'steps', items: string[] }
  | { kind: 'code', text: string }
  /** The e-mail's one action: a button, and the same link written out for a client without buttons. */
  | { kind: 'action', label: string, url: string }
  /** Smaller print after the action. */
  | { kind: 'note', text: string }

export interface EmailContent {
  to: string
  subject: string
  heading: string
  blocks: Block[]
  /** The link the message exists to deliver (the dev mailbox logs it). */
  link?: string
}

/** A header-safe, single-line version of user text (no CR/LF in a subject). */
export function oneLine (s: string): string {
  // 150 characters, not UTF-16 units: a cut never splits an emoji into a replacement character.
  return Array.from(s.replace(/[\r\n\t]+/g, ' ').trim()).slice(0, 150).join('')
}

/** A message of the `email` catalogue in the reader's language, dates in the workspace's zone. */
export function say (reader: Reader, key: string, values: MessageValues = {}): string {
  const all = { workspace: reader.branding.displayName, ...values }
  return translate(reader.locale, `email.${key}`, all, reader.timeZone)
}

const FONT = "-apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', " +
  "'Noto Sans JP', 'Noto Sans Arabic', sans-serif"
const TEXT = '#1f2328'
const MUTED = '#4b5563'
const PAGE = '#f3f4f6'
const CARD = '#ffffff'
/** Inline styles (clients drop <style> or parts of it): each box says its own colour. */
const STYLE = {
  text: `margin:0 0 16px;font-size:16px;line-height:24px;color:${TEXT}`,
  note: `margin:0 0 12px;font-size:14px;line-height:20px;color:${MUTED}`,
  code: `margin:0 0 16px;font-size:14px;line-height:20px;color:${TEXT};font-family:Menlo,Consolas,monospace;` +
    'word-break:break-all',
  list: `margin:0 0 16px;font-size:16px;line-height:24px;color:${TEXT}`,
  button: `display:inline-block;padding:12px 24px;font-family:${FONT};font-size:16px;line-height:24px;` +
    'font-weight:bold;color:#ffffff;text-decoration:none;border-radius:6px',
  heading: `margin:0 0 16px;font-size:22px;line-height:28px;color:${TEXT}`,
  name: `margin:0;font-size:18px;line-height:24px;font-weight:bold;color:${TEXT}`,
  logo: 'display:block;height:40px;width:auto;max-width:200px;border:0',
  footer: `margin:16px 0 0;max-width:560px;font-size:13px;line-height:18px;color:${MUTED};text-align:center`
}
/** A layout table: role="presentation", so a screen reader reads its content, not a grid. */
const LAYOUT = 'role="presentation" border="0" cellpadding="0" cellspacing="0"'

function blockHtml (b: Block, accent: string, align: string, hint: string): string {
  switch (b.kind) {
    case 'text': return `<p style="${STYLE.text}">${escapeHtml(b.text)}</p>`
    case 'note': return `<p style="${STYLE.note}">${escapeHtml(b.text)}</p>`
    case 'code': return `<p style="${STYLE.code}" dir="ltr">${escapeHtml(b.text)}</p>`
    case 'list':
    case 'steps': {
      const tag = b.kind === 'list' ? 'ul' : 'ol'
      const items = b.items.map(i => `<li style="margin:0 0 4px">${escapeHtml(i)}</li>`).join('')
      return `<${tag} style="${STYLE.list};padding-${align}:24px">${items}</${tag}>`
    }
    case 'action': {
      const href = escapeHtml(b.url)
      return `<table ${LAYOUT} style="margin:8px 0 24px"><tr>
<td align="center" bgcolor="${accent}" style="border-radius:6px;background-color:${accent}">
<a href="${href}" style="${STYLE.button}">${escapeHtml(b.label)}</a>
</td></tr></table>
<p style="${STYLE.note}">${escapeHtml(hint)}<br>
<a href="${href}" style="color:${accent};word-break:break-all" dir="ltr">${href}</a></p>`
    }
  }
}

function blockText (b: Block): string {
  switch (b.kind) {
    case 'text': case 'note': case 'code': return b.text
    case 'list': return b.items.map(i => `- ${i}`).join('\n')
    case 'steps': return b.items.map((i, n) => `${n + 1}. ${i}`).join('\n')
    case 'action': return `${b.label}\n${b.url}`
  }
}

/** The e-mail in the shell: HTML and text parts, From name of the workspace, subject on one line. */
export function renderEmail (reader: Reader, content: EmailContent): MailMessage {
  const { branding, locale } = reader
  const dir = textDirection(locale)
  const align = dir === 'rtl' ? 'right' : 'left'
  const accent = branding.accentColor ?? DEFAULT_ACCENT
  const lang = escapeHtml(locale === 'en-XA' ? 'en' : locale)
  const hint = say(reader, 'shell.linkHint')
  const footer = say(reader, 'shell.footer')
  const name = escapeHtml(branding.displayName)
  const logo = branding.logoUrl !== null
    ? `<img src="${escapeHtml(branding.logoUrl)}" alt="${name}" height="40" style="${STYLE.logo}">`
    : `<p style="${STYLE.name}">${name}</p>`
  const subject = oneLine(content.subject)
  const html = `<!doctype html>
<html lang="${lang}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light only">
<meta name="supported-color-schemes" content="light only">
<title>${escapeHtml(subject)}</title>
</head>
<body style="margin:0;padding:0;background-color:${PAGE};color:${TEXT}">
<div role="article" aria-label="${escapeHtml(subject)}" lang="${lang}" dir="${dir}" \
style="background-color:${PAGE};font-family:${FONT};text-align:${align}">
<table ${LAYOUT} width="100%" style="background-color:${PAGE}"><tr>
<td align="center" style="padding:24px 8px">
<table ${LAYOUT} width="100%" style="max-width:560px;background-color:${CARD};border-radius:8px"><tr>
<td style="padding:24px 24px 0;text-align:${align}">${logo}</td></tr><tr>
<td style="padding:16px 24px 8px;text-align:${align}">
<h1 style="${STYLE.heading}">${escapeHtml(content.heading)}</h1>
${content.blocks.map(b => blockHtml(b, accent, align, hint)).join('\n')}
</td></tr></table>
<p style="${STYLE.footer}">${escapeHtml(footer)}</p>
</td></tr></table>
</div>
</body>
</html>`
  const text = [
    content.heading,
    '',
    ...content.blocks.flatMap(b => [blockText(b), '']),
    '--',
    footer
  ].join('\n') + '\n'
  return {
    to: content.to,
    subject,
    text,
    html,
    fromName: oneLine(branding.senderName),
    ...(content.link !== undefined ? { link: content.link } : {})
  }
}
