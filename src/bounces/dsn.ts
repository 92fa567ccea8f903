// Delivery status notifications (RFC 3464): a multipart/report whose message/delivery-status part
// holds one block of fields about the message, then one block per recipient (Action, Status,
// Diagnostic-Code). mailparser (maintained with nodemailer) takes the MIME apart and hands that
// part over as an attachment (keepDeliveryStatus); its fields are read here. What the report
// says about the recipient is all that is taken from its content: WHICH invitation it is about is
// the signed address it was sent to, never anything inside it. Which SEND of it the report is
// about is the returned message's Date (the original's headers, which relays attach), else the
// report's Arrival-Date: an invitation re-sent since is not bounced by it (record.ts).

interface RecipientStatus {
  /** `permanent`: a 5.x.x failure; `temporary`: 4.x.x or delayed (the relay retries); `none`: delivered, relayed. */
  kind: 'permanent' | 'temporary' | 'none'
  /** The status and the remote server's diagnostic, as the report gives them. */
  reason: string
}

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status'])
/** Parts that carry the returned message's header (RFC 6522 text/rfc822-headers, or the whole message). */
const RETURNED = new Set(['text/rfc822-headers', 'message/rfc822', 'message/global', 'message/global-headers'])

/** What a report says: the recipients' statuses and when the reported message was made, if it says. */
interface DeliveryStatusReport {
  statuses: RecipientStatus[]
  sentAt: Date | undefined
}

/** Unfolded header fields of one block, names in lower case. */
function fields (block: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon > 0) out.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return out
}

function classify (f: Map<string, string>): RecipientStatus {
  const action = (f.get('action') ?? '').toLowerCase()
  const status = /^([245])\.\d{1,3}\.\d{1,3}/.exec(f.get('status') ?? '')
  const reason = [status?.[0], f.get('diagnostic-code')].filter(v => v !== undefined && v !== '').join(' ')
  if (action === 'failed' && status?.[1] !== '4') return { kind: 'permanent', reason }
  if (action === 'delayed' || status?.[1] === '4') return { kind: 'temporary', reason }
  return { kind: 'none', reason }
}

function dateOf (v: string | undefined): Date | undefined {
  const at = v === undefined ? NaN : Date.parse(v)
  return Number.isNaN(at) ? undefined : new Date(at)
}

/** The per-recipient statuses of a DSN ([] when the message is no delivery status notification), and its send time. */
export async function readDeliveryStatus (raw: Buffer): Promise<DeliveryStatusReport> {
  // Loaded at the first bounce, not at start: mailparser and its MIME and charset libraries are
  // about 50 modules that a service receiving no bounce never needs.
  const { simpleParser } = await import('mailparser')
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true })
  const part = parsed.attachments.find(a => DELIVERY_STATUS.has(a.contentType.toLowerCase()))
  if (part === undefined) return { statuses: [], sentAt: undefined }
  const blocks = part.content.toString('utf8').split(/\r?\n\s*\r?\n/).filter(b => b.trim() !== '')
  const returned = parsed.attachments.find(a => RETURNED.has(a.contentType.toLowerCase()))
  const header = returned?.content.toString('utf8').split(/\r?\n\r?\n/)[0]
  const sentAt = dateOf(header !== undefined ? fields(header).get('date') : undefined) ??
    dateOf(fields(blocks[0] ?? '').get('arrival-date'))
  // The first block is about the message (Reporting-MTA, Arrival-Date); the rest, each recipient.
  const statuses = blocks.slice(1).map(b => classify(fields(b))).filter(s => s.reason !== '' || s.kind !== 'none')
  return { statuses, sentAt }
}
