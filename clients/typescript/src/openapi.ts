// The contract's types: those openapi-typescript generates from openapi.yaml for the service and
// the console (`npm run generate`), re-exported rather than generated twice. The package's build
// (scripts/build-client.ts) puts the generated file itself in dist/, so the package stands alone.
export type * from '../../../src/generated/openapi.js'
