// The page's live region (#live, made by main.tsx): screen readers read what is said there, and
// it also shows at the foot of the page.

let liveRegion: HTMLElement | null = null

/** Say `text` in the page's live region. */
export function announce (text: string): void {
  liveRegion ??= document.getElementById('live')
  if (liveRegion === null) return
  // Cleared first, so the same sentence twice is announced twice.
  liveRegion.textContent = ''
  setTimeout(() => { if (liveRegion !== null) liveRegion.textContent = text }, 30)
}
