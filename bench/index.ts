import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'

/**
 * `npm run bench`: every benchmark in one runner, each in its own process, with the flags it knows;
 * `npm run bench:<name>` runs one of them with all its flags.
 *   npm run bench -- --items 10000 --rows 1000000 --seconds 5 --rounds 3
 * (MariaDB too when MYSQL_URL is set, PostgreSQL when PG_URL is)
 *
 * It builds the plugin first and runs the benchmarks on that build (see bench/tsconfig.json): they measure
 * what an application runs.
 */
const benchmarks: Array<[name: string, flags: string[]]> = [
  ['http', ['items', 'seconds', 'rounds', 'connections']],
  ['export', ['rows']],
  ['export-resume', ['rows']],
  ['import', ['rows']],
  ['aggregate', ['rows', 'runs']],
  ['keyset-paging', ['rows', 'runs']],
  ['prepared-statements', ['items', 'calls', 'rounds']],
  ['heap', ['seconds', 'connections']],
  ['conditional-reads', ['items', 'seconds', 'rounds', 'connections']],
  ['trusted-documents', ['items', 'seconds', 'rounds', 'connections']],
  ['live-queries', ['items', 'subscribers', 'questions', 'writes', 'seconds', 'rerun-writes']],
  ['server-cost', ['items', 'requests', 'rounds', 'connections']]
]

function flagsFor(args: string[], known: string[]) {
  const picked: string[] = []
  for (let index = 0; index < args.length; index += 2) {
    if (known.includes(args[index].replace(/^--/, ''))) picked.push(args[index], args[index + 1])
  }
  return picked
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const { status } = spawnSync(command, args, { stdio: 'inherit', env })
  if (status !== 0) process.exit(status ?? 1)
}

const [first, ...rest] = process.argv.slice(2)
const one =
  first !== undefined && !first.startsWith('--') ? benchmarks.find(([name]) => name === first) : undefined
if (first !== undefined && !first.startsWith('--') && !one) {
  console.error(`No benchmark ${first}: ${benchmarks.map(([name]) => name).join(', ')}`)
  process.exit(2)
}

run('npm', ['run', 'build', '--silent'])
const env = { ...process.env, TSX_TSCONFIG_PATH: resolve(__dirname, 'tsconfig.json') }
const bench = (name: string, args: string[]) =>
  run(process.execPath, ['--import', 'tsx', resolve(__dirname, `${name}.ts`), ...args], env)

if (one) bench(one[0], rest)
else {
  for (const [name, known] of benchmarks) {
    console.log(`\n=== ${name} ===`)
    bench(name, flagsFor(process.argv.slice(2), known))
  }
}
