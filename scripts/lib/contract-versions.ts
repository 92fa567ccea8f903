// The version rules of the contract (docs: "Versioning and compatibility"): semantic versioning
// of `info.version` against the last released contract (contract/releases/<version>.yaml).
// While the major version is 0, a breaking change bumps the minor version and anything else a
// client can see bumps the patch version; from 1.0.0 on, major and minor.
import type { Change } from './contract-diff.js'

interface Version { major: number, minor: number, patch: number }
type Bump = 'none' | 'patch' | 'minor' | 'major'

export function parseVersion (text: string): Version | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (m === null) return undefined
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) }
}

function formatVersion (v: Version): string {
  return `${v.major}.${v.minor}.${v.patch}`
}

export function compareVersions (a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch
}

function bumped (v: Version, bump: Bump): Version {
  if (bump === 'major') return { major: v.major + 1, minor: 0, patch: 0 }
  if (bump === 'minor') return { major: v.major, minor: v.minor + 1, patch: 0 }
  if (bump === 'patch') return { ...v, patch: v.patch + 1 }
  return v
}

/** The least bump these changes need from `released`. */
function requiredBump (released: Version, changes: readonly Change[]): Bump {
  const zero = released.major === 0
  if (changes.some(c => c.kind === 'breaking')) return zero ? 'minor' : 'major'
  if (changes.length > 0) return zero ? 'patch' : 'minor'
  return 'none'
}

/**
 * What is wrong with `current` as the version of a contract with `changes` since `released`: an
 * empty list when nothing is. The version must be one of the next versions (patch, minor or
 * major), at least the one the changes need; with no change it may stay.
 */
export function versionProblems (released: string, current: string, changes: readonly Change[]): string[] {
  const base = parseVersion(released)
  const now = parseVersion(current)
  if (base === undefined) return [`the released version ${released} is not MAJOR.MINOR.PATCH`]
  if (now === undefined) return [`info.version ${current} is not MAJOR.MINOR.PATCH`]
  const need = requiredBump(base, changes)
  const breaking = changes.filter(c => c.kind === 'breaking').length
  const why = breaking > 0
    ? `${breaking} breaking change${breaking === 1 ? '' : 's'} since ${released}`
    : `${changes.length} change${changes.length === 1 ? '' : 's'} since ${released} (none breaking)`
  if (compareVersions(now, base) === 0) {
    if (need === 'none') return []
    return [`${why}, but info.version is still ${released}: set it to ${formatVersion(bumped(base, need))}`]
  }
  const next = (['patch', 'minor', 'major'] as const).map(b => formatVersion(bumped(base, b)))
  if (!next.includes(current)) {
    return [`info.version ${current} is not a next version of ${released} (one of ${next.join(', ')})`]
  }
  const least = bumped(base, need)
  if (compareVersions(now, least) < 0) {
    const rule = `a ${need} bump while the major version is ${base.major}`
    return [`${why} need info.version ${formatVersion(least)} or later (${rule}), not ${current}`]
  }
  return []
}
