import assert from 'node:assert/strict'

/**
 * Mocha runs without `exit: true`, so a socket, timer, pool or child process a test leaves open would keep
 * the run from ending. This root hook, run once after every test, names them instead of letting CI hang.
 */
after(async function () {
  // No mocha timer of its own, which would be a Timeout left open; the wait below is bounded.
  this.timeout(0)
  const standard = new Set<unknown>([process.stdin, process.stdout, process.stderr])
  const open = () =>
    ((process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles() as object[]).filter(
      (handle) => !standard.has(handle)
    )
  // Closing is asynchronous: give what the last tests closed a moment to go.
  const pending = () => open().length + process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
  for (let waited = 0; waited < 5000 && pending() > 0; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // Timers are no handles to `_getActiveHandles`; Node lists those that keep the process alive as resources.
  const timers = process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout')
  const described = open().map((handle) => {
    const { constructor, remoteAddress, remotePort, pid, _idleTimeout } = handle as Record<string, any>
    return [constructor?.name, remoteAddress && `${remoteAddress}:${remotePort}`, pid, _idleTimeout]
      .filter((part) => part !== undefined)
      .join(' ')
  })
  assert.deepEqual([...described, ...timers], [], 'handles and timers left open after the suite')
})
