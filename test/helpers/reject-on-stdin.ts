// Preloaded (--import) into a server process by test/ops/shutdown.test.ts: the first line written to
// the process's stdin becomes an unhandled promise rejection, a fatal error from outside.
process.stdin.once('data', (line: Buffer) => {
  Promise.reject(new Error(line.toString().trim()))
})
