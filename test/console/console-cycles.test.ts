import t from 'tap'
import { appendFile, cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { runBin } from '../helpers/run-bin.js'

// The console is inside `npm run lint:cycles`: the script's madge command for console/, run on a
// copy of console/ with an import circle planted (a screen importing the app that routes to it),
// fails naming the circle; on the same copy without the plant it passes.

const madge = async (args: string[]) => await runBin('madge', args)

t.test('a planted console import circle fails lint:cycles', async t => {
  const pkg = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const command = pkg.scripts['lint:cycles']?.split('&&').map(c => c.trim()).find(c => c.endsWith(' console'))
  if (command === undefined) { t.fail('lint:cycles has no madge command for console/'); return }
  const args = command.split(/\s+/).slice(1, -1)
  t.ok(command.startsWith('madge --circular'), `lint:cycles runs ${command}`)

  const dir = await mkdtemp(join(tmpdir(), 'console-cycles-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const copy = join(dir, 'console')
  await cp(join(projectRoot, 'console'), copy, { recursive: true })

  const clean = await madge([...args, copy])
  t.equal(clean.code, 0, 'the copy as it is: no circle')

  await appendFile(join(copy, 'screens', 'members.tsx'), "\nimport '../app.js'\n")
  const planted = await madge([...args, copy])
  t.not(planted.code, 0, 'the planted circle fails')
  // (madge names the first way round it finds: from the app straight to the route table, or
  // through the hook that loads a screen's chunk from it, hooks/use-screen.ts.)
  t.match(
    planted.out, /app\.tsx > (?:[\w/-]+\.tsx? > )?routes\.ts > screens\/members\.tsx|screens\/members\.tsx > app\.tsx/,
    `naming it: ${planted.out.trim().split('\n').pop() ?? ''}`
  )
})
