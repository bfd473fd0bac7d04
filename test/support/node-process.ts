import { spawn } from 'node:child_process'
import { resolve } from 'node:path'

export interface NodeProcess {
  /** Every line the script printed so far. */
  readonly lines: string[]
  /** Resolves once `ready(lines)` holds; rejects after `timeoutMs` or when the script exits first. */
  waitFor(ready: (lines: string[]) => boolean, timeoutMs?: number): Promise<void>
  /** Writes a line to the script's standard input. */
  send(line: string): void
  /** Ends the script and waits for it to exit. */
  stop(): Promise<void>
}

/**
 * Runs `source` in a Node process of its own, from the repository's root (so it can require our
 * dependencies), with `args` as `process.argv.slice(1)`. A client or a lock holder there shares nothing with
 * the server under test, not even its event loop.
 */
export function runNode(source: string, args: string[] = []): NodeProcess {
  const child = spawn(process.execPath, ['-e', source, ...args], {
    cwd: resolve(__dirname, '../..'),
    stdio: ['pipe', 'pipe', 'inherit']
  })
  const lines: string[] = []
  let pending = ''
  const listeners = new Set<() => void>()
  let exited = false
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (pending + chunk.toString()).split('\n')
    pending = parts.pop()!
    lines.push(...parts)
    for (const listener of listeners) listener()
  })
  const exit = new Promise<void>((resolveExit) =>
    child.on('exit', () => {
      exited = true
      for (const listener of listeners) listener()
      resolveExit()
    })
  )
  return {
    lines,
    waitFor(ready, timeoutMs = 30000) {
      return new Promise((resolveWait, reject) => {
        const check = () => {
          if (ready(lines)) done(undefined)
          else if (exited) done(new Error(`the process exited first; it printed:\n${lines.join('\n')}`))
        }
        const timedOut = () => done(new Error(`timed out; the process printed:\n${lines.join('\n')}`))
        const timer = setTimeout(timedOut, timeoutMs)
        const done = (error: Error | undefined) => {
          clearTimeout(timer)
          listeners.delete(check)
          if (error) reject(error)
          else resolveWait()
        }
        listeners.add(check)
        check()
      })
    },
    send(line) {
      child.stdin.write(`${line}\n`)
    },
    async stop() {
      if (!exited) child.kill()
      await exit
    }
  }
}
