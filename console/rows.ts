import type { Schemas } from './api.js'

// The invite form's rows, as pasted or read from a CSV file, and back into the box.

export type Row = Schemas['InviteBatchRequest']['rows'][number]

const ROLE = /^(admin|member)$/i

/** Addresses as pasted: separated by commas, semicolons, spaces or new lines; each once. */
export function splitAddresses (text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map(a => a.trim()).filter(a => a !== ''))]
}

/**
 * Rows as pasted or as a CSV file of `email,role`: a line "address,role" gives that row its role;
 * any other line is addresses separated by commas, semicolons or spaces (in the form's role). A
 * header line (email,role) is skipped.
 */
export function parseRows (text: string): Row[] {
  const rows: Row[] = []
  for (const line of text.split(/\r?\n/)) {
    const cells = line.split(/[,;\t]/).map(c => c.trim().replace(/^"(.*)"$/, '$1'))
    if (/^e-?mail$/i.test(cells[0] ?? '') && (cells.length === 1 || ROLE.test(cells[1] ?? '') || /^role$/i.test(cells[1] ?? ''))) continue
    if (cells.length === 2 && cells[0] !== '' && ROLE.test(cells[1] ?? '')) {
      rows.push({ email: cells[0] as string, role: (cells[1] as string).toLowerCase() as Schemas['Role'] })
      continue
    }
    for (const email of line.split(/[\s,;]+/).filter(a => a !== '')) rows.push({ email })
  }
  return rows
}

/** Rows back into the box, one a line: "address" or "address,role" (parseRows reads them alike). */
export function rowsText (rows: Row[]): string {
  return rows.map(r => r.role === undefined ? r.email : `${r.email},${r.role}`).join('\n')
}
