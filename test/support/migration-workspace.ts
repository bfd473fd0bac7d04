import { execFile } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { buildSync } from 'esbuild'

const ROOT = resolve(__dirname, '../..')

/**
 * A user's application and the plugin installed in it, in a temporary folder: the plugin's sources compiled
 * to `lib/` as the build does (without its type check, which `npx tsc` runs), linked as
 * `node_modules/feathers-query` with its `bin`; the repository's packages (TypeBox, knex, drivers, tsx)
 * reachable from the parent folder. `npx feathers-query` in `app` then runs the command as a user does.
 */
export interface Workspace {
  app: string
  write(file: string, text: string): void
  /** `npx feathers-query <args>` in the app, with `env`; its output, or the failure's. */
  command(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }>
  migrations(): string[]
  remove(): void
}

function compilePlugin(packageDir: string) {
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(ROOT, 'src', file))
  buildSync({
    entryPoints: sources,
    outdir: join(packageDir, 'lib'),
    outbase: join(ROOT, 'src'),
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'error'
  })
  copyFileSync(join(ROOT, 'package.json'), join(packageDir, 'package.json'))
}

export function createWorkspace(): Workspace {
  const root = mkdtempSync(join(tmpdir(), 'fq-migration-'))
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir')
  const plugin = join(root, 'plugin')
  compilePlugin(plugin)
  const app = join(root, 'app')
  mkdirSync(join(app, 'node_modules/.bin'), { recursive: true })
  symlinkSync(plugin, join(app, 'node_modules/feathers-query'), 'dir')
  const bin = JSON.parse(readFileSync(join(plugin, 'package.json'), 'utf8')).bin['feathers-query'] as string
  chmodSync(join(plugin, bin), 0o755)
  symlinkSync(
    relative(join(app, 'node_modules/.bin'), join(plugin, bin)),
    join(app, 'node_modules/.bin/feathers-query')
  )
  const run = promisify(execFile)
  return {
    app,
    write(file, text) {
      mkdirSync(resolve(app, file, '..'), { recursive: true })
      writeFileSync(join(app, file), text)
    },
    async command(args, env) {
      try {
        const { stdout, stderr } = await run('npx', ['--no', 'feathers-query', ...args], {
          cwd: app,
          env: { ...process.env, ...env, NODE_OPTIONS: '' }
        })
        return { code: 0, stdout, stderr }
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string }
        return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }
      }
    },
    migrations() {
      const folder = join(app, 'migrations')
      return readdirSync(folder)
        .sort()
        .map((file) => join(folder, file))
    },
    remove() {
      rmSync(root, { recursive: true, force: true })
    }
  }
}
