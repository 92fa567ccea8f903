// Preloaded into a measured server by `npm run bench -- --profile` (node --import): the first
// SIGWINCH starts V8's CPU profiler, the next one stops it and writes the profile to
// $BENCH_PROFILE_DIR/<the name in $BENCH_PROFILE_DIR/next-name>.cpuprofile — so a profile covers
// exactly one measured round of one scenario, not the start-up or the idle time between.
// SIGWINCH because it is ignored by default and nobody else listens (close-with-grace takes SIGUSR2).
import { Session } from 'node:inspector'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.env.BENCH_PROFILE_DIR
if (dir !== undefined) {
  const session = new Session()
  session.connect()
  let running = false
  const post = (method, params = {}) => new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => { if (err !== null) reject(err); else resolve(result) })
  })
  process.on('SIGWINCH', () => {
    if (!running) {
      running = true
      post('Profiler.enable').then(() => post('Profiler.setSamplingInterval', { interval: 100 }))
        .then(() => post('Profiler.start')).catch(err => { process.stderr.write(`profile: ${err.message}\n`) })
      return
    }
    running = false
    const name = readFileSync(join(dir, 'next-name'), 'utf8').trim()
    post('Profiler.stop').then(({ profile }) => {
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile))
    }).catch(err => { process.stderr.write(`profile: ${err.message}\n`) })
  })
}
