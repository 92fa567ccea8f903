// The language chunks the console's build makes (scripts/lib/console-build.ts): `console-words:<locale>`.
declare module 'console-words:*' {
  /** The shell's words (src/i18n/catalogues/<locale>/console.json) as JSON text. */
  const shell: string
  export default shell
  /** Each screen's words (console-<screen>.json), its chunk fetched when asked for, as JSON text. */
  export const screens: Record<string, (() => Promise<{ default: string }>) | undefined>
}
