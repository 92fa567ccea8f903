// WCAG 2.x contrast (https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio): the relative luminance of
// an sRGB colour and the ratio of two, (L1 + 0.05) / (L2 + 0.05). An accent colour is a button's
// background under white text and a link's colour on white: both must reach AA for normal text.

/** WCAG 2.x AA for normal-size text. */
export const AA_CONTRAST = 4.5

/** The relative luminance of `#rrggbb` (0 black … 1 white). */
export function relativeLuminance (hex: string): number {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex)
  if (m === null) throw new TypeError(`not a #rrggbb colour: ${hex}`)
  const [r, g, b] = m.slice(1).map(h => {
    const c = Number.parseInt(h, 16) / 255
    // WCAG 2.2 names 0.04045 (2.0's 0.03928 changes no 8-bit value).
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** The contrast ratio of two `#rrggbb` colours, 1 (none) to 21 (black on white). */
export function contrastRatio (a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

/**
 * The ratio as people read it, rounded down to two decimals ("1.07:1"): rounding up could show
 * "4.50:1" for a colour refused at 4.499.
 */
export function formatRatio (ratio: number): string {
  return `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`
}
