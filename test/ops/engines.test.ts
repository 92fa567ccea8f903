import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { projectRoot } from '../../src/paths.js'

// The Node versions package.json declares and the dependency tree agree (issue 56, item 7): `npm
// install` on any declared version prints no engine warning. Read from the lockfile, so a
// dependency upgraded to one that drops a declared Node (cookie@2, dns2@3.1 want Node 22) fails
// here rather than in a newcomer's terminal. package.json's `overrides` say what is held back.

interface Lock { packages: Record<string, { version?: string, engines?: { node?: string } | string[], dev?: boolean }> }

const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as Lock

/** The lowest version of each major the range admits: 20.15.0, 24.0.0, 26.0.0 for ours. */
const floors = pkg.engines.node.split('||').map(r => semver.minVersion(r.trim())?.version ?? r)

t.test(`every package in the lockfile runs on the declared Node (${pkg.engines.node})`, async t => {
  t.ok(floors.length >= 2, `declared: ${floors.join(', ')}`)
  const refusing: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (path === '' || range === undefined) continue
    for (const node of floors) {
      if (!semver.satisfies(node, range, { includePrerelease: true })) refusing.push(`${path}@${entry.version ?? '?'} wants node ${range} (not ${node})`)
    }
  }
  t.same(refusing, [], 'no package wants a Node the project does not promise')
})
