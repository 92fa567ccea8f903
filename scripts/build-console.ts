import { context } from 'esbuild'
import { consoleBuildOptions, ensureConsoleBuilt, publishOnRebuild } from './lib/console-build.js'

// npm run build (and npm start's prestart): the admin console's bundle into dist/console/, when
// a file of console/ is newer than it (an unchanged console costs one stat per file at start).
// `--watch` rebuilds on every change of console/ (npm run console:watch, beside npm run dev), and
// publishes each build under its content-hashed names (scripts/lib/console-publish.ts).
if (process.argv.includes('--watch')) {
  const ctx = await context({ ...consoleBuildOptions, plugins: [...consoleBuildOptions.plugins, publishOnRebuild] })
  await ctx.watch()
} else {
  await ensureConsoleBuilt()
}
