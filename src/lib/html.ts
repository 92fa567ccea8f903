const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escape text for HTML element content and quoted attribute values (pages and e-mails alike). */
export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, c => HTML_ESCAPES[c] ?? c)
}
