import assert from 'node:assert/strict'

/**
 * Mocha runs without `exit: true`, so a socket, server, pool connection or child process a test leaves open
 * would keep the run from ending. This root hook, run once after every test, names them instead of letting CI
 * hang. (Timers are not counted: Node lists them only as anonymous resources, among them mocha's own.)
 */
after(async function () {
  this.timeout(10000)
  const standard = new Set<unknown>([process.stdin, process.stdout, process.stderr])
  const open = () =>
    ((process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles() as object[]).filter(
      (handle) => !standard.has(handle)
    )
  // Closing is asynchronous: give what the last tests closed a moment to go.
  for (let waited = 0; waited < 5000 && open().length > 0; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const described = open().map((handle) => {
    const { constructor, remoteAddress, remotePort, pid } = handle as Record<string, any>
    return [constructor?.name, remoteAddress && `${remoteAddress}:${remotePort}`, pid]
      .filter((part) => part !== undefined)
      .join(' ')
  })
  assert.deepEqual(described, [], 'handles left open after the suite')
})
