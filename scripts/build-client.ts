// `npm run client:build`: the typed client package, clients/typescript/, into its dist/
// (scripts/lib/client-build.ts). Its tests (test/clients/) build it themselves when it is stale.
import { buildClient, clientDir } from './lib/client-build.js'

await buildClient()
process.stdout.write(`client:build: ${clientDir}/dist (index.js, index.d.ts, openapi.d.ts)\n`)
