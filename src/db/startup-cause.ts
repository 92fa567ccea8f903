import { DatabaseUnavailableError } from './client.js'

// Why PostgreSQL could not be opened at start-up, as a person reads it: which part of
// DATABASE_URL is wrong (the password, the user, the database, the host, the port) or what to do
// at the server, from what the server or the network actually said. One cause, one piece of
// advice: "start PostgreSQL there" is said only when nothing accepted the connection.

export interface StartupCause {
  /** What happened, naming the server (host:port) and, where it is the cause, the user or database. */
  problem: string
  /** What to do next. */
  fix: string
}

export interface DatabaseTarget {
  /** host:port, as the connection was made. */
  where: string
  host: string
  user: string
  database: string
  /** Whether DATABASE_URL carries a password (pg sends an empty one when it does not). */
  hasPassword: boolean
  connectTimeoutMs: number
}

const URL_SHAPE = 'postgres://user:password@host:port/database'

/** The server's own words for an authentication refusal (a role or pg_hba.conf line), without secrets. */
function serverSays (err: { message?: unknown }): string {
  return typeof err.message === 'string' ? err.message.slice(0, 200) : ''
}

/** The cause of a failed first connection, or null when it is not the database's setting (a bug). */
export function databaseStartupCause (err: unknown, at: DatabaseTarget): StartupCause | null {
  const e = (err instanceof DatabaseUnavailableError ? err.cause : err) as { code?: unknown, message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : ''
  const { where, user, database } = at
  if ((code === '28P01' && !at.hasPassword) || /password must be a string/i.test(message)) {
    return {
      problem: `PostgreSQL at ${where} asks user ${user} for a password and DATABASE_URL has none`,
      fix: `add it (${URL_SHAPE})`
    }
  }
  switch (code) {
    case '28P01':
      return {
        problem: `PostgreSQL at ${where} refused the password of user ${user} (credentials refused)`,
        fix: `correct the password in DATABASE_URL (${URL_SHAPE})`
      }
    case '28000':
      return {
        problem: `PostgreSQL at ${where} refused user ${user} (${serverSays(e ?? {})})`,
        fix: 'correct the user in DATABASE_URL, or let it in at the server (CREATE ROLE, pg_hba.conf)'
      }
    case '3D000':
      return {
        problem: `the database ${database} does not exist at ${where} (database missing)`,
        fix: `create it (createdb ${database}) or correct the database's name in DATABASE_URL`
      }
    case '53300':
      return {
        problem: `PostgreSQL at ${where} has no connection left for this service (too many clients)`,
        fix: 'raise max_connections at the server, or lower DATABASE_POOL_MAX'
      }
    case '57P03':
      return {
        problem: `PostgreSQL at ${where} is starting up, shutting down or recovering (not accepting connections yet)`,
        fix: 'start the service again once PostgreSQL is up'
      }
    case 'ECONNREFUSED':
      return {
        problem: `nothing accepts connections at ${where} (connection refused)`,
        fix: 'start PostgreSQL there, or correct the host and port in DATABASE_URL'
      }
    case 'ENOTFOUND':
      return {
        problem: `the host ${at.host} was not found (no such host in DNS)`,
        fix: 'correct the host in DATABASE_URL'
      }
    case 'EAI_AGAIN':
      return {
        problem: `the host ${at.host} could not be looked up (DNS did not answer)`,
        fix: 'check this machine\'s DNS, or use an address in DATABASE_URL'
      }
    case 'EHOSTUNREACH': case 'ENETUNREACH':
      return {
        problem: `no route to ${where} (${code})`,
        fix: 'check the host in DATABASE_URL and this machine\'s network'
      }
  }
  if (/does not support SSL/i.test(message)) {
    return {
      problem: `PostgreSQL at ${where} does not support SSL, which DATABASE_URL asks for`,
      fix: 'remove sslmode from DATABASE_URL, or turn SSL on at the server'
    }
  }
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(message) ||
    code === 'ETIMEDOUT') {
    return {
      problem: `PostgreSQL at ${where} did not answer within ${at.connectTimeoutMs} ms (no answer)`,
      fix: 'check that PostgreSQL runs there and that a firewall lets this machine in, ' +
        'or correct the host and port in DATABASE_URL'
    }
  }
  if (err instanceof DatabaseUnavailableError || code === 'ECONNRESET') {
    return {
      problem: `the connection to ${where} failed (${code !== '' ? code : message.slice(0, 120)})`,
      fix: 'check that what listens there is PostgreSQL, and the host and port in DATABASE_URL'
    }
  }
  return null
}
