import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const ROOT = resolve(__dirname, '../..')
/** The app @feathersjs/generators 5.0.50 made: TypeScript, Koa, REST + socket.io, TypeBox, SQLite, local auth. */
const FIXTURE = join(__dirname, 'cli-app')
/**
 * Where the app is installed: its node_modules survive between runs, since installing them compiles sqlite3
 * from source (minutes). Each run copies the fixture's files over them again.
 */
const WORKSPACE = process.env.CLI_APP_WORKSPACE ?? join(homedir(), '.cache', 'feathers-query', 'cli-app')

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return execFileSync(command, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 2 ** 20
  })
}

export interface Tarball {
  file: string
  /** Bytes of the .tgz. */
  size: number
  unpackedSize: number
  files: string[]
}

/** `npm pack` of the repository, what `npm install feathers-query` would get (built by `prepare`). */
export function packRepository(): Tarball {
  const destination = mkdtempSync(join(tmpdir(), 'feathers-query-pack-'))
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], ROOT))
  return {
    file: join(destination, packed.filename),
    size: packed.size,
    unpackedSize: packed.unpackedSize,
    files: packed.files.map((file: { path: string }) => file.path)
  }
}

function installedPackages(lockFile: string): Set<string> {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8'))
  return new Set(Object.keys(lock.packages).filter((path) => path !== ''))
}

function directorySize(path: string): number {
  let bytes = 0
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += readFileSync(join(entry.parentPath, entry.name)).length
  }
  return bytes
}

export interface CliApp {
  dir: string
  /** The packages (node_modules paths) installing the tarball added to the app's lock file. */
  added: string[]
  /** Their bytes on disk. */
  addedBytes: number
}

/**
 * The fixture app, its dependencies installed (`npm ci`, cached by its lock file and Node's version), with
 * `tarball` installed into it as a user installs a package.
 */
export function cliAppWith(tarball: Tarball): CliApp {
  const lock = readFileSync(join(FIXTURE, 'package-lock.json'))
  const key = createHash('sha256').update(lock).update(process.version).digest('hex')
  const stamp = join(WORKSPACE, 'node_modules', '.fixture-lock')
  const cached = existsSync(stamp) && readFileSync(stamp, 'utf8') === key
  if (!cached) rmSync(WORKSPACE, { recursive: true, force: true })
  for (const entry of existsSync(WORKSPACE) ? readdirSync(WORKSPACE) : []) {
    if (entry !== 'node_modules') rmSync(join(WORKSPACE, entry), { recursive: true, force: true })
  }
  cpSync(FIXTURE, WORKSPACE, { recursive: true })
  if (!cached) {
    run('npm', ['ci', '--no-audit', '--no-fund'], WORKSPACE)
    writeFileSync(stamp, key)
  }
  run('npm', ['install', '--no-audit', '--no-fund', tarball.file], WORKSPACE)
  const before = installedPackages(join(FIXTURE, 'package-lock.json'))
  const added = [...installedPackages(join(WORKSPACE, 'package-lock.json'))].filter(
    (path) => !before.has(path)
  )
  const addedBytes = added.reduce((sum, path) => sum + directorySize(join(WORKSPACE, path)), 0)
  return { dir: WORKSPACE, added, addedBytes }
}

/** The guide page whose code blocks build the app: the README links to it as the way to use the plugin. */
export const GETTING_STARTED = 'docs/guide/getting-started.md'

/**
 * Writes each code block of the getting-started guide marked ```ts file=<path> into the app, as a user would
 * copy it.
 */
export function applyReadme(app: CliApp) {
  const readme = readFileSync(join(ROOT, GETTING_STARTED), 'utf8')
  const written: string[] = []
  for (const [, path, code] of readme.matchAll(/^```ts file=(\S+)\n([\s\S]*?)^```$/gm)) {
    const target = join(app.dir, path)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, code)
    written.push(path)
  }
  return written
}

/**
 * The commands of the getting-started guide's blocks marked ```sh run, one per line as the user types them in
 * the app's folder (a trailing `# comment` dropped).
 */
export function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, GETTING_STARTED), 'utf8')
  return [...readme.matchAll(/^```sh run\n([\s\S]*?)^```$/gm)].flatMap(([, block]) =>
    block
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '')
  )
}

/**
 * Runs a command line of the guide in the app's folder, as the user's shell would (words split on spaces; the
 * guide's commands quote nothing): `npx` with `--no`, so that it runs the app's installed bin or fails, never
 * one fetched from the registry. No TypeScript loader is inherited (NODE_OPTIONS): the app's own is used.
 */
export function runInApp(app: CliApp, line: string): string {
  const [command, ...args] = line.split(/\s+/)
  return run(command, command === 'npx' ? ['--no', ...args] : args, app.dir, { NODE_OPTIONS: '' })
}

/** Edits an app file, failing when `from` is not in it (the generated file changed). */
export function replaceInFile(app: CliApp, path: string, from: RegExp | string, to: string) {
  const file = join(app.dir, path)
  const text = readFileSync(file, 'utf8')
  const replaced = text.replace(from, to)
  if (replaced === text) throw new Error(`${path} does not hold ${from}`)
  writeFileSync(file, replaced)
}

/** `node lib/` in the app, on `port`; resolves once it listens. */
export async function startCompiledApp(app: CliApp, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['lib/'], {
    cwd: app.dir,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await new Promise<void>((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`the app did not start:\n${output}`)), 30000)
    child.on('exit', () => reject(new Error(`the app exited:\n${output}`)))
    child.stdout!.on('data', () => {
      if (output.includes('listening')) {
        clearTimeout(timer)
        resolveStart()
      }
    })
  })
  return child
}
