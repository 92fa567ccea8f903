// `npm test`'s reporter (`tap --reporter=./test/helpers/progress-reporter.mjs`): one line per test
// file as it finishes — its number, ok or not ok, its name and how long it took — so a run of
// several minutes shows where it is. A failing file is printed in full (its TAP: every assertion
// and the failure's diagnostics); so are tap's closing comments, among them the summary line
// `# { total: N, pass: N, fail: N, skip: N }` that .ci/run reads.
import { Transform } from 'node:stream'

const TOP_RESULT = /^(not )?ok (\d+) - (.*?)(?: # time=([\d.]+)ms)?(?: # (SKIP|TODO).*)?$/

export default class ProgressReporter extends Transform {
  #partial = ''
  /** The lines of the file being reported (indented TAP), kept until its result line. */
  #block = []
  /** After a failing file's result line, its diagnostics (two-space indented YAML) follow. */
  #inFailure = false
  #started = Date.now()

  _transform (chunk, _encoding, done) {
    const lines = (this.#partial + chunk.toString('utf8')).split('\n')
    this.#partial = lines.pop() ?? ''
    for (const line of lines) this.#line(line)
    done()
  }

  _flush (done) {
    if (this.#partial !== '') this.#line(this.#partial)
    done()
  }

  #line (line) {
    if (line.startsWith('    ') || line.startsWith('# Subtest: ')) {
      this.#inFailure = false
      this.#block.push(line)
      return
    }
    if (this.#inFailure && (line.startsWith('  ') || line === '')) {
      this.push(`${line}\n`)
      return
    }
    this.#inFailure = false
    const result = TOP_RESULT.exec(line)
    if (result !== null) {
      const [, failed, n, name, ms, directive] = result
      const took = ms !== undefined ? ` (${(Number(ms) / 1000).toFixed(1)} s)` : ''
      const elapsed = ((Date.now() - this.#started) / 1000).toFixed(0).padStart(4)
      if (failed !== undefined) {
        this.push(`${this.#block.join('\n')}\n`)
        this.#inFailure = true
      }
      this.push(`${elapsed} s  ${failed !== undefined ? 'not ok' : 'ok'} ${n} - ${name}${took}${directive !== undefined ? ` # ${directive}` : ''}\n`)
      this.#block = []
      return
    }
    // tap's own top-level lines: the version, the plan, and the closing comments (summary, time).
    if (line.startsWith('#') || line.startsWith('Bail out!')) this.push(`${line}\n`)
  }
}
