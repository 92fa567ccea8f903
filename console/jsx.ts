// Imported by the console's build (scripts/lib/console-build.ts, jsxImport) into every module with JSX
// (no module imports it; `npm run typecheck` checks JSX through tsconfig.browser.json's jsxImportSource):
// esbuild compiles `<a href={x}>…</a>` to `jsx$h('a', { href: x }, …)` with Preact's own h and
// Fragment. Children as arguments rather than a `children` property in each element's props:
// 0.3 kB less on the wire than the automatic runtime (preact/jsx-runtime), the same elements.
// Names no module of console/ would give a variable of its own (a parameter `h` would shadow the
// factory: `heads.map(h => <th>…)` then calls a string).
export { h as jsx$h, Fragment as jsx$Fragment } from 'preact'
