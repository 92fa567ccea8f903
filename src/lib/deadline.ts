/**
 * `work`, or a TimeoutError once `ms` have passed — whichever comes first. The one deadline of
 * the service (SMTP send, health ping); it does not cancel `work`, so a rejection that comes
 * after the deadline is swallowed here instead of becoming an unhandled rejection.
 */
export async function withDeadline<T> (work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => { reject(Object.assign(new Error(`${what} timed out after ${ms} ms`), { name: 'TimeoutError' })) }, ms
    )
  })
  work.catch(() => {})
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}
