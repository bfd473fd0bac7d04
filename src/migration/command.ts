import knex, { type Knex } from 'knex'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { linkResources, resolveDefinitions } from '../resource/resolve'
import type { ResolvedResource } from '../resource/resolved'
import { readCatalog } from '../schema/catalog'
import { diffPlan } from './diff'
import { upsertKeyMismatches } from '../schema/unique-keys'
import { loadResources, type LoadedResources } from './load-resources'
import { creationPlan, isEmpty, type MigrationPlan } from './migration-plan'
import { migrationFileName } from './file-name'
import { renderMigration } from './render'
import { tablePlans } from './table-plan'
import { registerTypeScript } from './typescript-loader'

export const USAGE = `Usage: feathers-query migration [module ...] [--diff] [--name <name>] [--dir <folder>] [--knexfile <file>]

Writes the knex migration of the resources the modules export (an app with the plugin, such as a Feathers
CLI app's src/app.ts, the default; or resource definitions) into <folder> (default: migrations).
  --diff      compare with the database's tables and write what changes them (new tables, added columns, ...)
  --name      the migration's name (default: create_<tables> or alter_<tables>)
  --knexfile  the database for --diff when the modules export definitions only (default: knexfile.ts)`

interface Arguments {
  modules: string[]
  diff: boolean
  name?: string
  dir: string
  knexfile?: string
}

/** Thrown for what the user must change in the command line or the application; printed without a stack. */
export class CommandError extends Error {}

export function parseArguments(argv: string[], cwd: string): Arguments {
  const parsed: Arguments = { modules: [], diff: false, dir: 'migrations' }
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]
    const value = () => {
      const next = argv[++index]
      if (next === undefined || next.startsWith('--'))
        throw new CommandError(`${argument} needs a value\n\n${USAGE}`)
      return next
    }
    if (argument === '--diff') parsed.diff = true
    else if (argument === '--name') parsed.name = value()
    else if (argument === '--dir') parsed.dir = value()
    else if (argument === '--knexfile') parsed.knexfile = value()
    else if (argument.startsWith('--')) throw new CommandError(`Unknown option ${argument}\n\n${USAGE}`)
    else parsed.modules.push(argument)
  }
  if (parsed.modules.length === 0) {
    if (!existsSync(join(cwd, 'src/app.ts')))
      throw new CommandError(`Name the module exporting the resources.\n\n${USAGE}`)
    parsed.modules.push('src/app.ts')
  }
  if (parsed.name !== undefined && !/^[\w-]+$/.test(parsed.name)) {
    throw new CommandError('--name takes letters, digits, _ and - only')
  }
  return parsed
}

function resolved(loaded: LoadedResources): ResolvedResource[] {
  if (loaded.definitions.length === 0) {
    throw new CommandError(
      'The modules export no resources: export the app (src/app.ts) or defineResource(...) values.'
    )
  }
  const resources = resolveDefinitions(loaded.definitions)
  try {
    linkResources(resources)
  } catch (error) {
    throw new CommandError(
      `${(error as Error).message}\nGive the module of every related resource too, or the app (src/app.ts).`
    )
  }
  return resources
}

/** The knex instance of the resources' tables: the application's, or the knexfile's. */
function databaseOf(loaded: LoadedResources, cwd: string, knexfile?: string): { db: Knex; own: boolean } {
  const models = new Set(loaded.models.values())
  if (models.size > 1) {
    throw new CommandError(
      'The resources live in several databases (knex instances): give the modules of one at a time.'
    )
  }
  if (models.size === 1 && loaded.models.size === loaded.definitions.length)
    return { db: [...models][0], own: false }
  const file = resolve(
    cwd,
    knexfile ?? (existsSync(join(cwd, 'knexfile.ts')) ? 'knexfile.ts' : 'knexfile.js')
  )
  if (!existsSync(file))
    throw new CommandError(
      `--diff needs the database: export the app, or give --knexfile (${file} is missing)`
    )
  if (file.endsWith('.ts')) registerTypeScript(cwd)
  const exported = createRequire(join(cwd, 'package.json'))(file)
  const config = (exported.default ?? exported) as Knex.Config
  return { db: knex(config), own: true }
}

async function plan(args: Arguments, loaded: LoadedResources, resources: ResolvedResource[], cwd: string) {
  const tables = tablePlans(resources)
  if (!args.diff) return creationPlan(tables)
  const { db, own } = databaseOf(loaded, cwd, args.knexfile)
  try {
    const catalog = await readCatalog(
      db,
      tables.map((table) => table.table)
    )
    const present = resources.filter((resource) => catalog.hasTable(resource.table))
    const missingKeys = await upsertKeyMismatches(db, present)
    return diffPlan(tables, resources, catalog, new Set(missingKeys.map((mismatch) => mismatch.resource)))
  } finally {
    if (own) await db.destroy()
  }
}

function defaultName(migration: MigrationPlan) {
  const tables = [
    ...migration.create.map((table) => table.table),
    ...migration.alter
      .filter(
        (table) =>
          table.add.length + table.allowNull.length + table.widen.length > 0 || table.uniqueKey !== undefined
      )
      .map((table) => table.table)
  ]
  const listed = tables.slice(0, 3).join('_') + (tables.length > 3 ? '_and_more' : '')
  return `${migration.alter.length > 0 && migration.create.length === 0 ? 'alter' : 'create'}_${listed}`
}

/** Runs the command; answers what to print, or throws a `CommandError`. */
export async function migrationCommand(argv: string[], cwd: string, print: (line: string) => void) {
  const args = parseArguments(argv, cwd)
  const loaded = loadResources(args.modules, cwd)
  if (loaded.loader) print(`Loaded ${args.modules.join(', ')} with ${loaded.loader}, transpiling only.`)
  const resources = resolved(loaded)
  try {
    const migration = await plan(args, loaded, resources, cwd)
    for (const note of migration.notes) print(`Note: ${note}`)
    if (isEmpty(migration)) {
      print("The tables fit the resources' schemas: no migration written.")
      return
    }
    const folder = resolve(cwd, args.dir)
    mkdirSync(folder, { recursive: true })
    const file = join(folder, migrationFileName(folder, args.name ?? defaultName(migration)))
    const command = ['npx feathers-query migration', ...argv].join(' ')
    writeFileSync(file, renderMigration(migration, command), { flag: 'wx' })
    print(`Wrote ${relative(cwd, file)}: run it with npm run migrate (knex migrate:latest).`)
  } finally {
    await Promise.all([...new Set(loaded.models.values())].map((db) => db.destroy()))
  }
}
