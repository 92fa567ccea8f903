// Delivery status notifications (RFC 3464): a multipart/report whose message/delivery-status part
// holds one block of fields about the message, then one block per recipient (Action, Status,
// Diagnostic-Code). mailparser (maintained with nodemailer) takes the MIME apart and hands that
// part over as an attachment (keepDeliveryStatus); its fields are read here. What the report
// says about the recipient is all that is taken from its content: WHICH invitation it is about is
// the signed address it was sent to, never anything inside it.

export interface RecipientStatus {
  /** `permanent`: a 5.x.x failure; `temporary`: 4.x.x or delayed (the relay retries); `none`: delivered, relayed. */
  kind: 'permanent' | 'temporary' | 'none'
  /** The status and the remote server's diagnostic, as the report gives them. */
  reason: string
}

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status'])

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

/** The per-recipient statuses of a DSN, or [] when the message is no delivery status notification. */
export async function readDeliveryStatus (raw: Buffer): Promise<RecipientStatus[]> {
  // Loaded at the first bounce, not at start: mailparser and its MIME and charset libraries are
  // about 50 modules that a service receiving no bounce never needs.
  const { simpleParser } = await import('mailparser')
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true })
  const part = parsed.attachments.find(a => DELIVERY_STATUS.has(a.contentType.toLowerCase()))
  if (part === undefined) return []
  const blocks = part.content.toString('utf8').split(/\r?\n\s*\r?\n/).filter(b => b.trim() !== '')
  // The first block is about the message (Reporting-MTA, Arrival-Date); the rest, each recipient.
  return blocks.slice(1).map(b => classify(fields(b))).filter(s => s.reason !== '' || s.kind !== 'none')
}
