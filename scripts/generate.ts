// Generates src/generated/openapi.ts from openapi.yaml (openapi-typescript).
// `--check` regenerates in memory and exits 1 when the committed file differs (CI).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { contractPath, projectRoot } from '../src/paths.js'

const target = join(projectRoot, 'src', 'generated', 'openapi.ts')
const HEADER = `// This file is generated from openapi.yaml by \`npm run generate\` (openapi-typescript).
// Do not edit it by hand: change the contract and regenerate. CI fails when it is stale.
/* eslint-disable */
`

const ast = await openapiTS(pathToFileURL(contractPath))
const text = HEADER + astToString(ast)

if (process.argv.includes('--check')) {
  let current = ''
  try { current = readFileSync(target, 'utf8') } catch {}
  if (current !== text) {
    console.error('src/generated/openapi.ts is stale: run `npm run generate` and commit the result')
    process.exit(1)
  }
  console.log('src/generated/openapi.ts is up to date')
} else {
  writeFileSync(target, text)
  console.log(`wrote ${target}`)
}
