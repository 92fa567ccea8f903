import { context } from 'esbuild'
import { consoleBuildDir } from '../src/console/page.js'
import { consoleBuildOptions, ensureConsoleBuilt } from './lib/console-build.js'

// npm run build (and npm start's prestart): the admin console's bundle into dist/console/, when
// a file of console/ is newer than it (an unchanged console costs one stat per file at start).
// `--watch` rebuilds on every change of console/ (npm run console:watch, beside npm run dev).
if (process.argv.includes('--watch')) {
  const ctx = await context({ ...consoleBuildOptions, outdir: consoleBuildDir })
  await ctx.watch()
} else {
  await ensureConsoleBuilt()
}
