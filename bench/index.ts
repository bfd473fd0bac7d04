import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

/**
 * `npm run bench`: every benchmark in one runner, each in its own process, with the flags it knows.
 *   npm run bench -- --items 10000 --rows 1000000 --seconds 5 --rounds 3
 * (MariaDB too when MYSQL_URL is set, PostgreSQL when PG_URL is)
 */
const benchmarks: Array<[file: string, flags: string[]]> = [
  ['http.ts', ['items', 'seconds', 'rounds', 'connections']],
  ['export.ts', ['rows']],
  ['aggregate.ts', ['rows', 'runs']],
  ['keyset-paging.ts', ['rows', 'runs']],
  ['prepared-statements.ts', ['items', 'calls', 'rounds']],
  ['heap.ts', ['seconds', 'connections']]
]

function flagsFor(known: string[]) {
  const args = process.argv.slice(2)
  const picked: string[] = []
  for (let index = 0; index < args.length; index += 2) {
    if (known.includes(args[index].replace(/^--/, ''))) picked.push(args[index], args[index + 1])
  }
  return picked
}

for (const [file, known] of benchmarks) {
  console.log(`\n=== ${file} ===`)
  const run = spawnSync(process.execPath, ['--import', 'tsx', resolve(__dirname, file), ...flagsFor(known)], {
    stdio: 'inherit'
  })
  if (run.status !== 0) process.exit(run.status ?? 1)
}
