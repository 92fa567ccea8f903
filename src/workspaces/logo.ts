import type { LogoMediaType } from '../db/workspace-branding.js'

// What an uploaded logo is, by its content, never by its name or declared type: a PNG (signature,
// then its IHDR chunk first, its IEND chunk last), a JPEG (SOI … EOI), a WebP (a RIFF container of
// type WEBP whose first chunk is VP8, VP8L or VP8X). Anything else is refused; an SVG by name,
// because it is the one image format that carries script, and people try it first.

export type SniffedLogo = { kind: 'image', mediaType: LogoMediaType } | { kind: 'svg' } | { kind: 'other' }

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function isPng (b: Buffer): boolean {
  // Signature (8), IHDR: length 13, type, width and height (non-zero), …; IEND: length 0, type, CRC.
  return b.length >= 8 + 25 + 12 && b.subarray(0, 8).equals(PNG_SIGNATURE) &&
    b.readUInt32BE(8) === 13 && b.toString('latin1', 12, 16) === 'IHDR' &&
    b.readUInt32BE(16) > 0 && b.readUInt32BE(20) > 0 &&
    b.readUInt32BE(b.length - 12) === 0 && b.toString('latin1', b.length - 8, b.length - 4) === 'IEND'
}

function isJpeg (b: Buffer): boolean {
  // SOI and the first marker's 0xFF; EOI last.
  return b.length >= 6 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff &&
    b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9
}

function isWebp (b: Buffer): boolean {
  // RIFF, its size (the bytes after these 8, at most what was sent), WEBP, the first chunk's type.
  return b.length >= 20 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' &&
    b.readUInt32LE(4) + 8 <= b.length && b.readUInt32LE(4) >= 12 &&
    ['VP8 ', 'VP8L', 'VP8X'].includes(b.toString('latin1', 12, 16))
}

/** An SVG document: XML text whose first element is `<svg` (after a BOM, declarations, comments). */
function isSvg (b: Buffer): boolean {
  const head = b.subarray(0, 4096).toString('utf8').replace(/^\uFEFF/, '')
  const rest = head.replace(/^(\s*(<\?[^>]*\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>))*\s*/i, '')
  return /^<svg[\s>/]/i.test(rest) || (/^<\?xml/i.test(head.trimStart()) && /<svg[\s>/]/i.test(head))
}

export function sniffLogo (bytes: Buffer): SniffedLogo {
  if (isPng(bytes)) return { kind: 'image', mediaType: 'image/png' }
  if (isJpeg(bytes)) return { kind: 'image', mediaType: 'image/jpeg' }
  if (isWebp(bytes)) return { kind: 'image', mediaType: 'image/webp' }
  return isSvg(bytes) ? { kind: 'svg' } : { kind: 'other' }
}
