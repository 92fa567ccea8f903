import neostandard from 'neostandard'
import reactHooks from 'eslint-plugin-react-hooks'

const COOKIES_READ = {
  selector: "MemberExpression[property.name='cookies']",
  message: 'Read a cookie with requestCookie (src/http/cookies.ts): request.cookies is null until then.'
}

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'clients/*/dist/**', 'data/**', 'src/generated/**', 'node_modules/**', '.tap/**', 'bench/*.json', 'bench/*.cpuprofile'] }),
  {
    // 120 columns, literals included: long SQL, e-mail text and tool descriptions are split
    // (template lines, concatenation, arrays joined) with the text kept byte-identical.
    files: ['src/**/*.{ts,js}', 'handlers/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true }]
    }
  },
  {
    // Factories stay small (docs/architecture.md): a service of several operations is split per
    // operation. A ratchet: the largest function in src/ is 105 lines today (createSlackWebApi).
    files: ['src/**/*.ts', 'handlers/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 110 }]
    }
  },
  {
    // Cookies are parsed on their first read (src/http/cookies.ts): `request.cookies` is null before.
    files: ['src/**/*.ts'],
    ignores: ['src/http/cookies.ts'],
    rules: { 'no-restricted-syntax': ['error', COOKIES_READ] }
  },
  {
    // Handlers call services (docs/architecture.md): a handler never reaches the ports behind them
    // (`services.ports.db`); what it needs from one is a service's (src/health/service.ts).
    files: ['handlers/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: "MemberExpression[property.name='ports']", message: 'Handlers call services, never services.ports.' },
        { selector: "ObjectPattern > Property[key.name='ports']", message: 'Handlers call services, never services.ports.' },
        COOKIES_READ]
    }
  },
  {
    // Tests: lines whose length comes from a string, template or regular expression (expected
    // messages, fixtures; 40 lines) are not counted yet.
    files: ['test/**/*.ts'],
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true
      }],
      // A test's own route reads cookies as the service does (a response's `cookies` is fine).
      'no-restricted-syntax': ['error', { ...COOKIES_READ, selector: "MemberExpression[object.name=/^req(uest)?$/][property.name='cookies']" }]
    }
  },
  {
    // The admin console (console/, TSX bundled by esbuild): an event handler starts a call and
    // leaves it (`void save()`); its outcome lands in the component's state, never a rejection
    // (console/api.ts `call` turns every failure into a Problem).
    // The rules of hooks hold for Preact's hooks as for React's (eslint-plugin-react-hooks reads
    // calls by name): hooks at the top level only, and every value an effect reads in its deps.
    files: ['console/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      'no-void': ['error', { allowAsStatement: true }],
      '@stylistic/max-len': ['error', { code: 220, ignoreUrls: true, ignoreStrings: true }]
    }
  },
  {
    // The pages' scripts run in the browser as classic scripts, loaded by src/auth/pages.ts through the shell of src/http/page-shell.ts
    // (compiled from page-scripts/*.ts; tsc checks every name against the DOM and page-helpers'
    // globals through tsconfig.browser.json). Scripts: page-helpers' `/* exported */` is honoured.
    files: ['page-scripts/**/*.ts'],
    languageOptions: { sourceType: 'script' }
  }
]
