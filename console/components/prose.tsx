// The contract's words as a person reads them: its descriptions (and their translations in the
// console's catalogues) mark names and paths with backticks (Markdown's code spans, `/api/scim/v2`),
// shown here as code, never as literal backticks.

/**
 * `text` with each `…` span as <code>, left to right in a right-to-left language too (a path's
 * leading slash stays in front); a lone backtick stays as it is.
 */
export function Prose ({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/)
  return <>{parts.map((part, i) => i % 2 === 1 ? <code key={i} dir='ltr'>{part}</code> : part)}</>
}
