import autocannon from 'autocannon'
import { readFileSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { benchDatabase, benchDatabaseNames } from './support/databases'
import { formatMb, rssOf, sampleRss } from './support/processes'
import { startBenchServers } from './support/bench-servers'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag } from './support/flags'

assertCompiledPlugin()

/**
 * What holds the example server's memory against the baseline's: both servers (as in bench:http) take the
 * same load, then each collects its garbage and writes a V8 heap snapshot. Prints, for both, the peak RSS
 * under load, RSS and V8's spaces after the collection (what is live: code, objects, and memory outside
 * V8's heap), and the heap's live objects summed by kind and constructor, largest difference first.
 *
 *   npm run bench:heap -- --seconds 10 --connections 20 [--top 25]
 */
const seconds = flag('seconds', 10)
const connections = flag('connections', 20)
const top = flag('top', 25)

const LIST = 'todoItems(paging: {first: 25}, filter: {completed: {is: false}})'
const QUERY = `{ ${LIST} { edges { node { id title completed created priority subTasks(paging: {first: 10}) { edges { node { id title } } } } } } }`
const post = (path: string) => ({
  method: 'POST' as const,
  path,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query: QUERY })
})
/** The load: the GraphQL list with sub tasks and the REST list, as bench:http sends them. */
const LOAD = {
  server: [post('/graphql'), { method: 'GET' as const, path: '/todo-items?completed=true&limit=25' }],
  baseline: [post('/graphql-nested'), { method: 'GET' as const, path: '/todo-items?completed=true&limit=25' }]
}

interface Probe {
  snapshot: string
  usage: NodeJS.MemoryUsage
  spaces: Array<{ space_name: string; space_used_size: number }>
}

/** Live bytes per `kind constructor` of a heap snapshot (each object's own size; V8's format). */
function liveBytesByKind(file: string) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
    nodes: number[]
    strings: string[]
  }
  const fields = snapshot.meta.node_fields
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((name) => fields.indexOf(name))
  const types = snapshot.meta.node_types[0]
  const bytes = new Map<string, number>()
  const large: Array<{ size: number; text: string }> = []
  for (let at = 0; at < nodes.length; at += fields.length) {
    const type = types[nodes[at + typeAt]]
    const size = nodes[at + sizeAt]
    // Objects by constructor; strings by size (V8 keeps each loaded module's source text, for functions it
    // compiles lazily); code, arrays and the rest by their kind alone.
    let key = type === 'object' || type === 'closure' ? `${type} ${strings[nodes[at + nameAt]]}` : type
    if (type === 'string' && size >= LARGE_STRING) {
      key = `string of ${LARGE_STRING / 1024} KB or more`
      large.push({ size, text: strings[nodes[at + nameAt]] })
    }
    bytes.set(key, (bytes.get(key) ?? 0) + size)
  }
  return { bytes, largest: large.sort((a, b) => b.size - a.size).slice(0, 8) }
}

const LARGE_STRING = 10 * 1024

async function probe(port: number): Promise<Probe> {
  const response = await fetch(`http://127.0.0.1:${port}/__heap`)
  if (!response.ok) throw new Error(`/__heap answered ${response.status}: start the server with --expose-gc`)
  return (await response.json()) as Probe
}

async function main() {
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    let stop = () => {}
    try {
      const pair = await startBenchServers(database, 10_000)
      stop = pair.stop
      const servers = [pair.server, pair.baseline]
      const ports = servers.map((server) => server.port)
      const peaks: number[] = []
      const idle = servers.map((server) => rssOf(server.pid))
      for (const [index, requests] of [LOAD.server, LOAD.baseline].entries()) {
        const sampler = sampleRss(servers[index].pid, 100)
        await autocannon({
          url: `http://127.0.0.1:${ports[index]}`,
          connections,
          duration: seconds,
          requests
        })
        sampler.stop()
        peaks.push(sampler.peak())
      }
      // RSS once the garbage is collected, read before the snapshot (writing one takes memory of its own).
      for (const port of ports) await fetch(`http://127.0.0.1:${port}/__gc`)
      const rss = servers.map((server) => rssOf(server.pid))
      const [ours, theirs] = await Promise.all(ports.map(probe))
      console.log(
        `\n${name}: ${seconds} s at ${connections} connections each (GraphQL list with sub tasks, REST list)`
      )
      const rows: string[][] = [
        ['', 'example server', 'baseline', 'difference'],
        ['idle RSS', formatMb(idle[0]), formatMb(idle[1]), formatMb(idle[0] - idle[1])],
        ['peak RSS under load', formatMb(peaks[0]), formatMb(peaks[1]), formatMb(peaks[0] - peaks[1])],
        ['RSS after a full collection', formatMb(rss[0]), formatMb(rss[1]), formatMb(rss[0] - rss[1])]
      ]
      for (const key of ['heapUsed', 'external', 'arrayBuffers'] as const) {
        rows.push([
          `  ${key}`,
          formatMb(ours.usage[key]),
          formatMb(theirs.usage[key]),
          formatMb(ours.usage[key] - theirs.usage[key])
        ])
      }
      for (const space of ours.spaces) {
        const other =
          theirs.spaces.find((candidate) => candidate.space_name === space.space_name)?.space_used_size ?? 0
        rows.push([
          `  V8 ${space.space_name}`,
          formatMb(space.space_used_size),
          formatMb(other),
          formatMb(space.space_used_size - other)
        ])
      }
      print(rows)
      const [heap, baselineHeap] = [liveBytesByKind(ours.snapshot), liveBytesByKind(theirs.snapshot)]
      const [mine, baseline] = [heap.bytes, baselineHeap.bytes]
      const kinds = [...new Set([...mine.keys(), ...baseline.keys()])]
        .map((kind) => ({ kind, ours: mine.get(kind) ?? 0, theirs: baseline.get(kind) ?? 0 }))
        .sort((a, b) => b.ours - b.theirs - (a.ours - a.theirs))
      console.log(`\nlive heap objects by kind, largest difference first (top ${top})`)
      print([
        ['kind', 'example server', 'baseline', 'difference'],
        ...kinds
          .slice(0, top)
          .map(({ kind, ours: a, theirs: b }) => [
            kind.slice(0, 60),
            formatKb(a),
            formatKb(b),
            formatKb(a - b)
          ])
      ])
      console.log(`\nthe example server's largest strings`)
      for (const { size, text } of heap.largest) {
        console.log(`${formatKb(size).padStart(8)}  ${JSON.stringify(text.slice(0, 90))}`)
      }
      for (const { snapshot } of [ours, theirs]) rmSync(dirname(snapshot), { recursive: true, force: true })
    } finally {
      stop()
      await database.drop()
    }
  }
}

const formatKb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`

function print(table: string[][]) {
  const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)) + 2)
  console.log(
    table
      .map((row) =>
        row
          .map((cell, column) => (column ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
          .join('')
      )
      .join('\n')
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
