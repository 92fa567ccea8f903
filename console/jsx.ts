// The bundle's JSX factory (scripts/lib/console-build.ts injects it): esbuild's classic transform
// calls h(type, props, ...children), shorter on the wire than the automatic runtime's
// jsx(type, { ...props, children }) for the same elements. tsc type-checks JSX as preact's.
export { h, Fragment } from 'preact'
