import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { projectRoot } from '../../src/paths.js'
import { ocsfMarkdownTable, ocsfOf } from '../../src/audit/ocsf.js'

// Every audit action of the contract's AuditAction names its OCSF class and activity
// (src/audit/ocsf.ts), and docs/audit.md shows exactly that table: an action added to the
// contract without a row fails here, as does a table in the docs that drifted from the code's.

const contract = parse(readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8')) as {
  components: { schemas: { AuditAction: { enum: string[] } } }
}
const actions = contract.components.schemas.AuditAction.enum

t.test('every action of the contract has its OCSF class and activity', async t => {
  const missing = actions.filter(a => ocsfOf(a) === null)
  t.same(missing, [], 'no action without a mapping (add it to src/audit/ocsf.ts)')
  for (const a of actions) {
    const m = ocsfOf(a)
    if (m === null) continue
    t.ok([3001, 3002, 3004, 3005, 3006, 4009, 6003].includes(m.classUid), `${a}: a class of OCSF (${m.classUid})`)
    t.equal(m.typeUid, m.classUid * 100 + m.activityId, `${a}: type_uid = class_uid × 100 + activity_id`)
    t.equal(m.categoryUid, Math.floor(m.classUid / 1000), `${a}: the class's category`)
  }
  t.match(ocsfOf('session.login'), { classUid: 3002, className: 'Authentication', activityId: 1, activityName: 'Logon' })
  t.match(ocsfOf('member.removed'), { classUid: 3001, className: 'Account Change', activityName: 'Delete' })
  t.equal(ocsfOf('no.such_action'), null)
})

t.test('docs/audit.md shows the table as the code has it', async t => {
  const doc = readFileSync(join(projectRoot, 'docs/audit.md'), 'utf8')
  const between = /<!-- ocsf:start -->\n([\s\S]*?)\n<!-- ocsf:end -->/.exec(doc)
  t.ok(between, 'the table is between <!-- ocsf:start --> and <!-- ocsf:end -->')
  t.equal(between?.[1], ocsfMarkdownTable(actions), 'the table as ocsfMarkdownTable prints it (regenerate it from there)')
})
