import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { compiledContractPath, parseContractYaml, readCompiled } from '../src/contract-file.js'
import { contractPath } from '../src/paths.js'

// npm run build (so npm start when something changed) and npm test's pretest: openapi.yaml
// compiled into dist/contract.json, the parsed document with the SHA-256 of the YAML it came
// from, which every start then reads instead of parsing the YAML (src/contract-file.ts). Checked
// against the OpenAPI meta-schema first: an invalid contract fails the build, with the
// validator's errors, rather than the start. Nothing to do when the compiled contract is current.

const bytes = readFileSync(contractPath)
const sha256 = createHash('sha256').update(bytes).digest('hex')
if (readCompiled(compiledContractPath, sha256) === undefined) {
  const doc = parseContractYaml(bytes)
  const result = await new Validator().validate(structuredClone(doc))
  if (!result.valid) {
    process.stderr.write(`openapi.yaml is not a valid OpenAPI document:\n${JSON.stringify(result.errors, null, 2)}\n`)
    process.exit(1)
  }
  mkdirSync(dirname(compiledContractPath), { recursive: true })
  // Written aside and renamed: a start (or a test process) never reads half a file.
  const scratch = `${compiledContractPath}.${process.pid}.tmp`
  writeFileSync(scratch, JSON.stringify({ sha256, doc }))
  renameSync(scratch, compiledContractPath)
}
