// The contract's words as a person reads them: its descriptions mark names and paths with
// backticks (Markdown's code spans, `/api/scim/v2`), shown here as code, never as literal backticks.

/** `text` with each `…` span as <code>; a lone backtick stays as it is. */
export function Prose ({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/)
  return <>{parts.map((part, i) => i % 2 === 1 ? <code key={i}>{part}</code> : part)}</>
}
