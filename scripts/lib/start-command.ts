import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'

/**
 * `npm start`'s command line, from package.json: node's flags and the script it runs. `exec`
 * first: the shell npm runs the script in (dash: it does not exec a lone command itself) becomes
 * node, so the SIGTERM or SIGINT npm forwards to its child reaches the service (test/ops/npm-start.test.ts). The bench
 * starts the service with the same flags (a measure of `node dist/src/server.js` without them would
 * be of another heap), and test/ops/docs.test.ts holds the commands the docs give to it.
 */
export interface StartCommand { line: string, nodeFlags: string[], script: string }

export function startCommand (): StartCommand {
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const line = pkg.scripts.start.trim()
  const words = line.split(/\s+/)
  const script = words.at(-1) ?? ''
  if (words[0] !== 'exec' || words[1] !== 'node' || !script.endsWith('.js')) {
    throw new Error(`package.json's start script is not "exec node [flags] script.js": ${line}`)
  }
  return { line, nodeFlags: words.slice(2, -1), script }
}
