// Bundling only (main.tsx imports it for nothing else): the code most screens share, put in the
// chunk of the shell's shared code (the API client, Preact) rather than in small chunks of its
// own. esbuild groups files by the entries that reach them, so each set of screens sharing a
// component got a chunk, and the Activity screen's first load fetched nine of them, each with
// about 300 B of headers on the wire. The entry imports this file and the build makes every
// screen import it (scripts/lib/console-build.ts), so every entry reaches these files. Activity's
// first load: 6 files instead of 13, 24,969 B on the wire with the largest language chunk
// (Japanese, i18n.ts) against 25,281 B before there was one; Overview, which uses few of them,
// 18,887 B instead of 15,454 (English).
import './announce.js'
import './format.js'
import './components/confirm-button.js'
import './components/copyable.js'
import './components/once-secret.js'
import './components/table.js'
import './hooks/use-form-problem.js'
import './hooks/use-paged.js'
