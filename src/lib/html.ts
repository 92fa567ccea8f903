const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escape text for HTML element content and quoted attribute values (pages and e-mails alike). */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, c => HTML_ESCAPES[c] ?? c)
}

/**
 * The service's accent where a workspace chose none, on its pages and in its e-mails alike
 * (buttons, links): white text on it, and it on white, reach 6.7:1 (WCAG AA asks 4.5).
 */
export const DEFAULT_ACCENT = '#1d4ed8'
