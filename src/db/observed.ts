import type { Meter, Tracer } from '../lib/telemetry.js'
import type { Database, Queryable } from './client.js'

// Every statement through the Database port, observed in one place for both databases: a span
// per statement (OpenTelemetry's pg instrumentation would see only the pg Pool, never PGlite)
// and a count of failed statements. buildApp wraps the database only when metrics or traces
// are on, so with both off a statement costs exactly what it did.

/** The operation a statement performs (`SELECT`, `INSERT` …): a span name of low cardinality. */
function operationOf (text: string): string {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL'
}

export function observeDatabase (db: Database, o: { meter: Meter, tracer: Tracer }): Database {
  const system = db.kind === 'pglite' ? 'pglite' : 'postgresql'
  const statement = async <T>(text: string, work: () => Promise<T>): Promise<T> => {
    try {
      // The text carries placeholders ($1 …), never the values.
      return await o.tracer.span(operationOf(text), { 'db.system': system, 'db.query.text': text }, work)
    } catch (err) {
      o.meter.databaseQueryError()
      throw err
    }
  }
  const observed = (q: Queryable): Queryable => ({
    query: async (text, params) => await statement(text, async () => await q.query(text, params)),
    exec: async text => { await statement(text, async () => { await q.exec(text) }) },
    // A transaction's after-commit callbacks (the job engine's wake-up) pass through untouched.
    ...(q.afterCommit !== undefined ? { afterCommit: q.afterCommit } : {})
  })
  const top = observed(db)
  return {
    kind: db.kind,
    query: top.query,
    exec: top.exec,
    transaction: async fn => await o.tracer.span(
      'transaction', { 'db.system': system }, async () => await db.transaction(async tx => await fn(observed(tx)))
    ),
    ping: async () => { await statement('SELECT 1', async () => { await db.ping() }) },
    poolStats: () => db.poolStats(),
    close: async () => { await db.close() },
    ...(db.dumpDataDir !== undefined ? { dumpDataDir: db.dumpDataDir } : {}),
    ...(db.listen !== undefined ? { listen: db.listen } : {})
  }
}
