import type { Database, Queryable } from '../../src/db/client.js'

// Reading the planner's choices in tests: the statements a repository function sends (through a
// Queryable that records them), and EXPLAIN's plan of one of them, as a flat list of nodes.

export interface Sent { text: string, params: readonly unknown[] }

/** A Queryable over `db` that keeps every statement sent through it. */
export function recording (db: Database): { q: Queryable, sent: Sent[] } {
  const sent: Sent[] = []
  const q: Queryable = {
    query: async (text, params) => {
      sent.push({ text, params: params ?? [] })
      return await db.query(text, params)
    },
    exec: async text => { await db.exec(text) }
  }
  return { q, sent }
}

export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Plan Rows'?: number
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
  'Rows Removed by Join Filter'?: number
  Plans?: PlanNode[]
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)]

/**
 * The nodes of the plan of `sent` (EXPLAINed with its own parameters, a custom plan as the
 * service's unnamed statements get), the root first. `analyze`: run it, with actual rows and loops.
 */
export async function planOf (db: Database, sent: Sent, opts: { analyze?: boolean } = {}): Promise<PlanNode[]> {
  const options = opts.analyze === true ? 'ANALYZE, FORMAT JSON' : 'FORMAT JSON'
  const r = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (${options}) ${sent.text}`, sent.params)
  const raw = r.rows[0]?.['QUERY PLAN']
  const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: PlanNode }>
  return flatten((doc[0] as { Plan: PlanNode }).Plan)
}
