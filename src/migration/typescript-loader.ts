import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

interface Loader {
  /** The package the application lists in its package.json to have it. */
  package: string
  /** What `require` loads to register it. */
  name: string
  register(load: NodeJS.Require, resolved: string): void
}

/** The loaders the command can load an application's TypeScript with, in the order it tries them. */
const LOADERS: Loader[] = [
  // tsx compiles without type checking, as fast as esbuild.
  { package: 'tsx', name: 'tsx/cjs', register: (load, resolved) => load(resolved) },
  // ts-node is what a Feathers CLI app has (its knexfile and `npm run dev` run with it); types are the
  // compiler's business, not a migration's, so it only transpiles.
  {
    package: 'ts-node',
    name: 'ts-node',
    register: (load, resolved) =>
      (load(resolved) as { register(options: object): void }).register({ transpileOnly: true })
  }
]

function resolvable(load: NodeJS.Require, name: string): string | undefined {
  try {
    return load.resolve(name)
  } catch {
    return undefined
  }
}

const pair = (load: NodeJS.Require, loader: Loader): [NodeJS.Require, Loader] => [load, loader]

/** The packages the application's package.json depends on (none without one). */
function listedPackages(cwd: string): Set<string> {
  try {
    const manifest = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'))
    return new Set(Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }))
  } catch {
    return new Set()
  }
}

/**
 * Lets `require` load `.ts` files with the application's own TypeScript loader, as knex's CLI does for a
 * knexfile.ts: first a loader the application's package.json lists (a Feathers CLI app lists ts-node, which
 * its knexfile and `npm run dev` run with, while tsx is only installed for the CLI's generators), then tsx or
 * ts-node, found from the application's folder, then from the plugin's. Nothing is registered when a loader
 * already is (the command run through tsx or ts-node). Answers the loader's name.
 */
export function registerTypeScript(cwd: string): string {
  if (require.extensions['.ts']) return 'the running one'
  const listed = listedPackages(cwd)
  const fromApp = createRequire(join(cwd, 'package.json'))
  const candidates: Array<[NodeJS.Require, Loader]> = [
    ...LOADERS.filter((loader) => listed.has(loader.package)).map((loader) => pair(fromApp, loader)),
    ...[fromApp, createRequire(__filename)].flatMap((load) => LOADERS.map((loader) => pair(load, loader)))
  ]
  for (const [load, loader] of candidates) {
    const resolved = resolvable(load, loader.name)
    if (!resolved) continue
    loader.register(load, resolved)
    return loader.name
  }
  throw new Error(
    'Loading TypeScript needs tsx or ts-node in the application (a Feathers CLI app has ts-node): ' +
      'npm install --save-dev tsx, or give the compiled JavaScript module (lib/app.js) instead.'
  )
}
