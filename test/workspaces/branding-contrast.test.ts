import t from 'tap'
import { AA_CONTRAST, contrastRatio, formatRatio, relativeLuminance } from '../../src/workspaces/contrast.js'

// WCAG 2.x relative luminance and contrast, against pairs whose ratios are published (WebAIM's
// contrast checker, the WCAG understanding documents).

t.test('relative luminance: black 0, white 1, the primaries by their weights', async t => {
  t.equal(relativeLuminance('#000000'), 0)
  t.equal(relativeLuminance('#FFFFFF'), 1, 'case does not matter')
  t.equal(relativeLuminance('#ff0000').toFixed(4), '0.2126')
  t.equal(relativeLuminance('#00ff00').toFixed(4), '0.7152')
  t.equal(relativeLuminance('#0000ff').toFixed(4), '0.0722')
  t.throws(() => relativeLuminance('yellow'), TypeError)
})

t.test('contrast ratios of known pairs, in either order', async t => {
  const known: Array<[string, string, string]> = [
    ['#000000', '#ffffff', '21.00:1'],
    ['#ffffff', '#ffffff', '1.00:1'],
    ['#ffff00', '#ffffff', '1.07:1'],
    ['#767676', '#ffffff', '4.54:1'], // the lightest grey that passes AA on white
    ['#777777', '#ffffff', '4.47:1'], // one step lighter: fails
    ['#0000ff', '#ffffff', '8.59:1'],
    ['#ff0000', '#ffffff', '3.99:1'],
    ['#1d4ed8', '#ffffff', '6.70:1']
  ]
  for (const [a, b, ratio] of known) {
    t.equal(formatRatio(contrastRatio(a, b)), ratio, `${a} on ${b}`)
    t.equal(contrastRatio(a, b), contrastRatio(b, a), `${a}/${b} symmetric`)
  }
  t.ok(contrastRatio('#767676', '#ffffff') >= AA_CONTRAST && contrastRatio('#777777', '#ffffff') < AA_CONTRAST)
})

t.test('a ratio is shown rounded down, never up to a pass', async t => {
  t.equal(formatRatio(4.4999), '4.49:1')
  t.equal(formatRatio(1.0738), '1.07:1')
})
