import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'src/generated/**', 'node_modules/**', '.tap/**', 'bench/*.json', 'bench/*.cpuprofile'] }),
  {
    // The pages' scripts run in the browser as classic scripts, loaded by src/auth/pages.ts
    // (type-checked against the DOM by tsconfig.browser.json). The browser globals they may use,
    // by name: everything else is a no-undef error.
    files: ['src/auth/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { document: 'readonly', location: 'readonly', fetch: 'readonly', URLSearchParams: 'readonly' }
    }
  }
]
