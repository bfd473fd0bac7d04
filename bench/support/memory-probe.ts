import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import v8 from 'node:v8'

/**
 * What the benchmark servers answer about their memory and CPU time, so that they are read alike:
 * `GET /__cpu` answers `process.cpuUsage()`;
 * `GET /__gc` runs a full collection (with --expose-gc) and answers `process.memoryUsage()`, what is live
 * rather than garbage a collection has not reached yet; `GET /__heap` does the same, then writes a heap
 * snapshot and answers its path with V8's heap spaces.
 */
export function memoryProbe(path: string): unknown {
  // The process's own CPU time in microseconds (user + system), finer than /proc's 10 ms ticks.
  if (path === '/__cpu') return process.cpuUsage()
  if (path !== '/__gc' && path !== '/__heap') return undefined
  if (typeof global.gc !== 'function') return undefined
  global.gc()
  if (path === '/__gc') return process.memoryUsage()
  const snapshot = v8.writeHeapSnapshot(join(mkdtempSync(join(tmpdir(), 'fq-heap-')), 'server.heapsnapshot'))
  return { snapshot, usage: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics() }
}
