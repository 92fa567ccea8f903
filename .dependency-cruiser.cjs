// The layers of src/ and handlers/ (docs/architecture.md#layers), enforced by `npm run lint:cycles`.
// Each layer may import the layers below it and never one above; type-only imports count the same
// (tsPreCompilationDeps). No module loop, and no loop between folders, anywhere.
//
//   7 entry        src/app.ts and src/routes/ (left out: see options.exclude), src/server.ts, src/tracing.ts,
//                  src/body-parsing.ts, src/connection-caps.ts
//   6 doors        handlers/, src/plugins/, src/mcp/ (and: a handler never imports src/db/, a port or a plugin)
//   5 composition  src/services.ts
//   4 features     src/<feature>/ (invitations, members, sessions, slack, …): each other, without loops
//   3 mechanisms   src/mail/, src/jobs/, src/oauth/, src/http/, src/principal.ts, src/error-response.ts
//   2 ports        src/ports/
//   1 repositories src/db/
//   0 foundation   src/generated/, src/lib/, src/config/, src/config.ts, src/clock.ts, src/logger.ts,
//                  src/errors.ts, src/paths.ts, src/contract-file.ts, src/json-body.ts, src/validation.ts
//
// A new folder under src/ is a feature unless it is named in a lower layer here.

const FOUNDATION = [
  'src/generated/', 'src/lib/', 'src/config/', 'src/config\\.ts$', 'src/clock\\.ts$', 'src/logger\\.ts$',
  'src/errors\\.ts$', 'src/paths\\.ts$', 'src/contract-file\\.ts$', 'src/json-body\\.ts$', 'src/validation\\.ts$'
]
const DB = ['src/db/']
const PORTS = ['src/ports/']
const MECHANISMS = ['src/mail/', 'src/jobs/', 'src/oauth/', 'src/http/', 'src/principal\\.ts$', 'src/error-response\\.ts$']
const COMPOSITION = ['src/services\\.ts$']
const DOORS = ['handlers/', 'src/plugins/', 'src/mcp/']
const ENTRY = [
  'src/app\\.ts$', 'src/server\\.ts$', 'src/tracing\\.ts$', 'src/body-parsing\\.ts$', 'src/connection-caps\\.ts$'
]
// A module directly in src/ is in no folder, so only these lists give it a layer: one missing from
// them would be checked by no rule. The check refuses to run until it is placed.
const unplaced = require('node:fs').readdirSync(require('node:path').join(__dirname, 'src'))
  .filter(f => f.endsWith('.ts'))
  .filter(f => ![...FOUNDATION, ...MECHANISMS, ...COMPOSITION, ...ENTRY].some(p => new RegExp(`^${p}`).test(`src/${f}`)))
if (unplaced.length > 0) {
  throw new Error(`.dependency-cruiser.cjs: put ${unplaced.map(f => `src/${f}`).join(', ')} in a layer`)
}
const below = [...FOUNDATION, ...DB, ...PORTS, ...MECHANISMS]
const anchored = paths => paths.map(p => `^${p}`)
// Features: any folder of src/ not named above.
const FEATURES = ['^src/[^/]+/']
const featurePathNot = anchored(below.concat(DOORS).filter(p => p.endsWith('/')))

/** A forbidden rule: nothing in `from` imports anything in `to`. */
const upward = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } })
/** The same rule's half for features: `from` imports no feature folder. */
const toFeature = (name, comment, from) => ({
  name, comment, severity: 'error', from: { path: from }, to: { path: FEATURES, pathNot: featurePathNot }
})

module.exports = {
  forbidden: [
    upward('foundation-imports-upward',
      'src/lib/, src/config/, src/generated/ and the root helpers import nothing above them (not even src/db/)',
      anchored(FOUNDATION), anchored([...DB, ...PORTS, ...MECHANISMS, ...COMPOSITION, ...DOORS, ...ENTRY])),
    toFeature('foundation-imports-a-feature', 'the foundation imports no feature', anchored(FOUNDATION)),
    upward('db-imports-upward',
      'src/db/ (the repositories and the Database adapter) imports only the foundation',
      anchored(DB), anchored([...PORTS, ...MECHANISMS, ...COMPOSITION, ...DOORS, ...ENTRY])),
    toFeature('db-imports-a-feature', 'src/db/ imports no feature', anchored(DB)),
    upward('ports-import-upward',
      'src/ports/ declares the interfaces; it imports only the foundation and src/db/ types',
      anchored(PORTS), anchored([...MECHANISMS, ...COMPOSITION, ...DOORS, ...ENTRY])),
    toFeature('ports-import-a-feature', 'src/ports/ imports no feature, not even a type', anchored(PORTS)),
    upward('mechanisms-import-upward',
      'adapters and shared mechanisms (mail, jobs, oauth state, http cookies and page shell, principal) sit below the features',
      anchored(MECHANISMS), anchored([...COMPOSITION, ...DOORS, ...ENTRY])),
    toFeature('mechanisms-import-a-feature', 'an adapter or shared mechanism imports no feature', anchored(MECHANISMS)),
    {
      name: 'features-import-upward',
      comment: 'a feature imports features, mechanisms, ports and the foundation: never src/services.ts, a door or the entry',
      severity: 'error',
      from: { path: FEATURES, pathNot: featurePathNot },
      to: { path: anchored([...COMPOSITION, ...DOORS, ...ENTRY]) }
    },
    upward('composition-imports-upward',
      'src/services.ts composes features; it never imports a door or the entry',
      anchored(COMPOSITION), anchored([...DOORS, ...ENTRY])),
    upward('doors-import-the-entry',
      'handlers, plugins and the MCP endpoint never import src/app.ts or the other entry modules',
      anchored(DOORS), anchored(ENTRY)),
    upward('handlers-call-services',
      'a handler calls services: it never reaches a repository, a port or a plugin',
      ['^handlers/'], ['^src/db/', '^src/ports/index\\.ts$', '^src/plugins/', '^src/jobs/', '^src/mail/']),
    {
      name: 'no-circular',
      comment: 'no import loop between modules, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true }
    },
    {
      name: 'no-folder-loop',
      comment: 'no loop between folders (src/a imports src/b, which imports src/a), type-only imports included',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // src/app.ts, the top, and src/routes/, which binds the contract's operations to handlers/, are
    // left out: they join handlers/ to src/, so at folder level they would make src/ and handlers/
    // one loop, and every folder of src/ part of it. They may import anything; only src/app.ts
    // imports src/routes/, and src/server.ts src/app.ts.
    exclude: { path: ['^src/app\\.ts$', '^src/routes/', '^src/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs']
  }
}
