import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

/** Resident memory of a process in bytes, read from /proc (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  return match ? Number(match[1]) * 1024 : 0
}

/**
 * CPU time a process has used so far (user and system), in microseconds, read from /proc (Linux; the kernel
 * counts in clock ticks of 10 ms, so read it over seconds, not single requests).
 */
export function cpuMicrosOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are the
  // 14th and 15th fields of the line, the 12th and 13th after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/** Samples a process's RSS until stopped; `peak()` is the largest value seen. */
export function sampleRss(pid: number, everyMs = 20) {
  let peak = rssOf(pid)
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid))
    } catch {
      // The process has exited.
    }
  }, everyMs)
  return {
    peak: () => peak,
    stop: () => clearInterval(timer)
  }
}

/**
 * Runs a TypeScript file of bench/support in its own Node process (so its memory is its own) and resolves
 * with the process once it printed `READY <payload>`.
 */
export function startScript(file: string, env: Record<string, string>, nodeOptions: string[] = []) {
  // `file` is relative to bench/, or absolute (another checkout's server, see bench:cost's --before).
  const child = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', resolve(__dirname, '..', file)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
  const lines: string[] = []
  const ready = new Promise<{ child: ChildProcess; payload: string }>((resolveReady, reject) => {
    let buffer = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      const parts = buffer.split('\n')
      buffer = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        if (line.startsWith('READY')) resolveReady({ child, payload: line.slice(6) })
      }
    })
    child.on('exit', (code) => reject(new Error(`${file} exited with ${code}: ${lines.join('\n')}`)))
  })
  return { ready, lines, child }
}

export function formatMb(bytes: number) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * Pins a process and all its threads to one core (Linux's `taskset`), so that a server's CPU time is not
 * shared with the load generator's: the per-request figures of two servers then move by a few percent between
 * rounds instead of tens.
 */
export function pinToCore(pid: number, core: number) {
  const { status, stderr } = spawnSync('taskset', ['-a', '-cp', String(core), String(pid)], {
    encoding: 'utf8'
  })
  if (status !== 0) throw new Error(`taskset could not pin ${pid} to core ${core}: ${stderr}`)
}
