import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The same code runs from src/ (tsx, tests) and from dist/src/ (npm start); both find the project
// root by walking up to package.json, so openapi.yaml and the SQL migrations resolve either way.
function findRoot (start: string): string {
  let dir = start
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`package.json not found above ${start}`)
    dir = parent
  }
  return dir
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)))
export const contractPath = join(projectRoot, 'openapi.yaml')
export const migrationsDir = join(projectRoot, 'src', 'db', 'migrations')
