import t from 'tap'
import { readFileSync } from 'node:fs'
import { sniffLogo } from '../../src/workspaces/logo.js'

// What a logo is, by its content: the three formats by signature and structure, SVG by its first
// element whatever precedes it, anything else (HTML, a truncated file, another RIFF) refused.

const fixture = (name: string) => readFileSync(new URL(`../fixtures/branding/${name}`, import.meta.url))
const png = fixture('logo.png')
const jpeg = fixture('logo.jpg')
const webp = fixture('logo.webp')

t.test('PNG, JPEG and WebP by their content', async t => {
  t.same(sniffLogo(png), { kind: 'image', mediaType: 'image/png' })
  t.same(sniffLogo(jpeg), { kind: 'image', mediaType: 'image/jpeg' })
  t.same(sniffLogo(webp), { kind: 'image', mediaType: 'image/webp' })
})

t.test('SVG, however it starts', async t => {
  const svgs = [
    '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    '\uFEFF<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n<svg/>',
    '  <SVG viewBox="0 0 1 1"></SVG>'
  ]
  for (const svg of svgs) t.same(sniffLogo(Buffer.from(svg)), { kind: 'svg' }, svg.slice(0, 30))
})

t.test('anything else is not an image', async t => {
  const others: Array<[string, Buffer]> = [
    ['an HTML page', Buffer.from('<!doctype html><html><body><img src=x onerror=alert(1)></body></html>')],
    ['text', Buffer.from('hello')],
    ['empty', Buffer.alloc(0)],
    ['a PNG cut short (no IEND)', png.subarray(0, png.length - 12)],
    ['a PNG signature and nothing after', png.subarray(0, 8)],
    ['a JPEG without its EOI', jpeg.subarray(0, jpeg.length - 2)],
    ['a WebP claiming more bytes than sent', webp.subarray(0, webp.length - 100)],
    ['a RIFF WAVE', Buffer.concat([Buffer.from('RIFF'), Buffer.from([12, 0, 0, 0]), Buffer.from('WAVEfmt data')])],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')]
  ]
  for (const [what, bytes] of others) t.same(sniffLogo(bytes), { kind: 'other' }, what)
})
