import t from 'tap'
import { appendFile, cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { runBin } from '../helpers/run-bin.js'

// The layers of docs/architecture.md are `npm run lint:cycles`' dependency-cruiser command
// (.dependency-cruiser.cjs). Run on a copy of src/ and handlers/: as they are, it passes; with an
// upward import planted (a repository importing the composition root, type-only) and a loop between
// two feature folders planted (type-only too, no module loop), it fails naming both rules.

const depcruise = async (cwd: string, args: string[]) => await runBin('depcruise', args, cwd)

t.test('a planted upward import and a planted folder loop fail lint:cycles; the tree without them passes', async t => {
  const pkg = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const command = pkg.scripts['lint:cycles']?.split('&&').map(c => c.trim()).find(c => c.startsWith('depcruise '))
  if (command === undefined) { t.fail('lint:cycles runs no depcruise command'); return }
  const args = command.split(/\s+/).slice(1)
  t.same(args.slice(-2), ['src', 'handlers'], `lint:cycles runs ${command}`)

  const dir = await mkdtemp(join(tmpdir(), 'layers-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  for (const name of ['src', 'handlers', 'tsconfig.json', '.dependency-cruiser.cjs']) {
    await cp(join(projectRoot, name), join(dir, name), { recursive: true })
  }

  const clean = await depcruise(dir, args)
  t.equal(clean.code, 0, `the copy as it is passes: ${clean.out.trim().split('\n').pop() ?? ''}`)

  // Upward: the foundation's repositories reaching the composition root, by a type only.
  await appendFile(join(dir, 'src/db/users.ts'), "\nimport type { Services } from '../services.js'\nexport type Planted = Services\n")
  // A folder loop: invitations/ imports workspaces/ already; workspaces/ now imports invitations/.
  await appendFile(join(dir, 'src/workspaces/summary.ts'),
    "\nimport type { InvitationView } from '../invitations/view.js'\nexport type PlantedView = InvitationView\n")
  const planted = await depcruise(dir, args)
  t.not(planted.code, 0, 'the planted imports fail')
  t.match(planted.out, /db-imports-upward: src\/db\/users\.ts → src\/services\.ts/, 'naming the upward import and its rule')
  t.match(planted.out, /no-folder-loop: src\/workspaces →\s+src\/invitations →\s+src\/workspaces/, 'naming the folder loop')
})
