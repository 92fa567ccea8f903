// Generates from openapi.yaml: src/generated/openapi.ts (openapi-typescript),
// src/generated/api-key-scopes.ts (the scope catalogue, `ApiKeyScope`, with its descriptions: the
// console's scope picker and the tests read the contract's list, not a copy) and
// src/generated/catalogues.ts (the `EventType` and `AuditAction` enums as lists: the console's
// event picker and its Activity filter list what the contract lists).
// `--check` regenerates in memory and exits 1 when a committed file differs (CI).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import { parse } from 'yaml'
import { contractPath, projectRoot } from '../src/paths.js'

const HEADER = `// This file is generated from openapi.yaml by \`npm run generate\` (openapi-typescript).
// Do not edit it by hand: change the contract and regenerate. CI fails when it is stale.
/* eslint-disable */
`

function scopeCatalogue (): string {
  interface ScopeSchema { enum: string[], 'x-enumDescriptions': Record<string, string> }
  type Contract = { components: { schemas: { ApiKeyScope: ScopeSchema } } }
  const contract = parse(readFileSync(contractPath, 'utf8')) as Contract
  const { enum: values, 'x-enumDescriptions': words } = contract.components.schemas.ApiKeyScope
  const missing = values.filter(v => words[v] === undefined)
  if (missing.length > 0) throw new Error(`openapi.yaml: ApiKeyScope lacks x-enumDescriptions of ${missing.join(', ')}`)
  const type = 'ReadonlyArray<{ scope: components[\'schemas\'][\'ApiKeyScope\'], description: string }>'
  return HEADER.replace('(openapi-typescript)', '(the ApiKeyScope schema)') +
    'import type { components } from \'./openapi.js\'\n\n' +
    '/** The contract\'s scope catalogue, in its order, with what each scope allows. */\n' +
    `export const apiKeyScopes: ${type} = ` +
    JSON.stringify(values.map(scope => ({ scope, description: words[scope] })), null, 2) + '\n'
}

function enumCatalogues (): string {
  type Contract = { components: { schemas: Record<'EventType' | 'AuditAction', { enum: string[] }> } }
  const { schemas } = (parse(readFileSync(contractPath, 'utf8')) as Contract).components
  const list = (name: keyof typeof schemas): string =>
    `ReadonlyArray<components['schemas']['${name}']> = ${JSON.stringify(schemas[name].enum, null, 2)}\n`
  return HEADER.replace('(openapi-typescript)', '(the EventType and AuditAction schemas)') +
    'import type { components } from \'./openapi.js\'\n\n' +
    '/** The event catalogue (webhooks, the feed), in the contract\'s order. */\n' +
    `export const eventTypes: ${list('EventType')}\n` +
    '/** The audit trail\'s actions, in the contract\'s order. */\n' +
    `export const auditActions: ${list('AuditAction')}`
}

const types = HEADER + astToString(await openapiTS(pathToFileURL(contractPath)))
const outputs: Array<[string, string]> = [
  [join(projectRoot, 'src', 'generated', 'openapi.ts'), types],
  [join(projectRoot, 'src', 'generated', 'api-key-scopes.ts'), scopeCatalogue()],
  [join(projectRoot, 'src', 'generated', 'catalogues.ts'), enumCatalogues()]
]

if (process.argv.includes('--check')) {
  let stale = false
  for (const [target, text] of outputs) {
    let current = ''
    try { current = readFileSync(target, 'utf8') } catch {}
    if (current !== text) {
      console.error(`${target} is stale: run \`npm run generate\` and commit the result`)
      stale = true
    }
  }
  if (stale) process.exit(1)
  console.log('src/generated is up to date')
} else {
  for (const [target, text] of outputs) {
    writeFileSync(target, text)
    console.log(`wrote ${target}`)
  }
}
