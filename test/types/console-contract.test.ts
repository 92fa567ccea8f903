import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { parse } from 'yaml'
import { contractPath, projectRoot } from '../../src/paths.js'

// The console is a client of the contract and nothing more: its types come from openapi.yaml
// (openapi-typescript → src/generated/openapi.ts), so a field renamed in the contract must break
// the console's build. A copy of the contract with User.email renamed to emailAddress is
// generated into a temporary tree beside a copy of console/, and tsc — with the console's own
// compiler options (tsconfig.browser.json) — must fail there, naming the field.

const run = promisify(execFile)

interface Schema { required?: string[], properties?: Record<string, unknown> }

t.test('a copy of the contract with one field renamed makes the console fail tsc', async t => {
  const contract = parse(readFileSync(contractPath, 'utf8')) as { components: { schemas: Record<string, Schema> } }
  const user = contract.components.schemas.User as Schema
  t.ok(user.properties?.email !== undefined && user.required?.includes('email'), 'User.email, as the console reads it')
  user.properties = Object.fromEntries(Object.entries(user.properties ?? {}).map(([k, v]) => [k === 'email' ? 'emailAddress' : k, v]))
  user.required = (user.required ?? []).map(k => k === 'email' ? 'emailAddress' : k)

  const dir = mkdtempSync(join(tmpdir(), 'console-contract-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  mkdirSync(join(dir, 'src', 'generated'), { recursive: true })
  writeFileSync(join(dir, 'src', 'generated', 'openapi.ts'), astToString(await openapiTS(contract as never)))
  cpSync(join(projectRoot, 'console'), join(dir, 'console'), { recursive: true })
  symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir')
  const browser = JSON.parse(readFileSync(join(projectRoot, 'tsconfig.browser.json'), 'utf8')) as Record<string, unknown>
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...browser, include: ['console/**/*.ts', 'console/**/*.tsx'] }))

  const tsc = join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const outcome = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir })
    .then(() => ({ code: 0, stdout: '' }), (e: { code: number, stdout: string }) => ({ code: e.code, stdout: e.stdout }))
  t.not(outcome.code, 0, 'tsc fails')
  const errors = outcome.stdout.split('\n').filter(l => l.includes('error TS'))
  t.ok(errors.some(l => /Property 'email' does not exist/.test(l)), `naming the renamed field:\n${errors.slice(0, 5).join('\n')}`)
  t.ok(errors.every(l => l.startsWith('console/')), 'in the console\'s own files')
})
