import { strict as assert } from 'node:assert'
import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { createTestDatabase, databaseNames, type TestDatabase } from './support/databases'
import { httpClient } from './support/http'
import { createWorkspace, type Workspace } from './support/migration-workspace'

/** The database's knex configuration in the app, from DATABASE_URL (SQLite: a file both processes open). */
const DATABASE = `import type { Knex } from 'knex'

export function knexConfig(): Knex.Config {
  const url = process.env.DATABASE_URL!
  if (url.startsWith('mysql:')) return { client: 'mysql2', connection: url }
  if (url.startsWith('postgres:')) return { client: 'pg', connection: url }
  return { client: 'sqlite3', connection: { filename: url }, useNullAsDefault: true }
}
`

const KNEXFILE = `import { knexConfig } from './src/database'

module.exports = knexConfig()
`

const APP = `import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa } from '@feathersjs/koa'
import knex from 'knex'
import { errorHandler, feathersQuery } from 'feathers-query'
import { knexConfig } from './database'
import { resources } from './resources'

export const db = knex(knexConfig())
export const app = koa(feathers())
app.use(errorHandler())
app.use(bodyParser())
app.configure(feathersQuery({ Model: db, resources }))
`

/**
 * Projects, their tasks, labels linked to tasks through a join resource; a SQL-computed count, a hidden
 * owner and a soft delete, which have no column or one the schema does not list. \`taskFields\` adds fields.
 */
const resources = (taskFields = '', projectOptions = '') => `import { Type } from '@feathersjs/typebox'
import { defineResource, Field, FilterableField, IDField } from 'feathers-query'

export const projects = defineResource({
  name: 'Project',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    name: FilterableField(Type.String({ maxLength: 100 })),
    ownerId: Field(Type.Integer(), { hidden: true, default: 1 }),
    taskCount: FilterableField(Type.Integer())
  }),
  sqlComputed: {
    taskCount: ({ knex, column }) =>
      knex.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ?', ['tasks as counted', 'counted.projectId', column('id')])
  },
  many: { tasks: { resource: 'Task', foreignKey: 'projectId' } },
  delete: { useSoftDelete: true }${projectOptions}
})

export const tasks = defineResource({
  name: 'Task',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    title: FilterableField(Type.String()),
    done: FilterableField(Type.Boolean(), { default: false }),
    estimate: FilterableField(Type.Number(), { nullable: true }),
    due: FilterableField(Type.String({ format: 'date-time' }), { nullable: true }),
    projectId: FilterableField(Type.Integer())${taskFields}
  }),
  one: { project: { resource: 'Project', foreignKey: 'projectId' } },
  many: {
    labels: { resource: 'Label', through: { resource: 'TaskLabel', foreignKey: 'taskId', otherKey: 'labelId' } }
  },
  query: { defaultSort: [{ field: 'title', direction: 'ASC' }], enableTotalCount: true },
  enableAggregate: true
})

export const labels = defineResource({
  name: 'Label',
  schema: Type.Object({ id: IDField(Type.Integer(), { readOnly: true }), name: FilterableField(Type.String()) }),
  upsert: { key: ['name'] }
})

export const taskLabels = defineResource({
  name: 'TaskLabel',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    taskId: FilterableField(Type.Integer()),
    labelId: FilterableField(Type.Integer())
  })
})

export const resources = [projects, tasks, labels, taskLabels]
`

/** The fields the second version of the schema adds to Task. */
const ADDED_FIELDS = `,
    priority: FilterableField(Type.Integer(), { default: 0 }),
    note: Field(Type.String({ maxLength: 500 }), { nullable: true })`

/** The second version of the schema upserts projects by name, which needs a unique index. */
const PROJECT_KEY = `,
  upsert: { key: ['name'] }`

/** Loads the app's TypeScript modules as the test's own (through tsx, which runs the test). */
const load = createRequire(__filename)

interface RunningApp {
  app: { listen(port: number): Promise<Server>; teardown(): Promise<unknown> }
  db: Knex
}

/** The app's modules loaded afresh (the test edits them), as a restarted server loads them. */
function loadApp(workspace: Workspace): RunningApp {
  for (const file of Object.keys(require.cache))
    if (file.startsWith(workspace.app)) delete require.cache[file]
  return load(join(workspace.app, 'src/app.ts'))
}

/** `npm run migrate` of a CLI app: knex's migrate:latest with the app's knexfile. */
async function migrate(workspace: Workspace, url: string) {
  const migrator = knex(loadKnexfile(workspace, url))
  try {
    await migrator.migrate.latest({ directory: join(workspace.app, 'migrations'), loadExtensions: ['.ts'] })
  } finally {
    await migrator.destroy()
  }
}

function loadKnexfile(workspace: Workspace, url: string): Knex.Config {
  process.env.DATABASE_URL = url
  delete require.cache[join(workspace.app, 'knexfile.ts')]
  return load(join(workspace.app, 'knexfile.ts'))
}

for (const database of databaseNames) {
  describe(`The migration command, as a user runs it in an app [${database}]`, function () {
    this.timeout(120000)
    let workspace: Workspace
    let testDatabase: TestDatabase
    let url: string
    const command = (args: string[]) => workspace.command(args, { DATABASE_URL: url })

    before(async () => {
      workspace = createWorkspace()
      testDatabase = await createTestDatabase(database)
      url = database === 'sqlite' ? join(workspace.app, 'app.sqlite') : testDatabase.url
      process.env.DATABASE_URL = url
      workspace.write('src/database.ts', DATABASE)
      workspace.write('knexfile.ts', KNEXFILE)
      workspace.write('src/app.ts', APP)
      workspace.write('src/resources.ts', resources())
    })
    after(async () => {
      await testDatabase?.drop()
      workspace?.remove()
    })

    async function serving(run: (http: ReturnType<typeof httpClient>) => Promise<void>) {
      const { app, db } = loadApp(workspace)
      const server = await app.listen(0)
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      try {
        await run(httpClient(`http://127.0.0.1:${port}`))
      } finally {
        await app.teardown()
        await new Promise((resolve) => server.close(resolve))
        await db.destroy()
      }
    }

    it("writes the tables of the app's resources, which knex creates and the plugin serves", async () => {
      const written = await command(['migration', 'src/app.ts', '--name', 'projects_and_tasks'])
      assert.equal(written.code, 0, written.stderr)
      const [file] = workspace.migrations()
      assert.match(file, /\/\d{14}_projects_and_tasks\.ts$/)
      const source = readFileSync(file, 'utf8')
      // Frozen: it names its tables and columns itself, and reads neither the schemas nor the plugin.
      assert.doesNotMatch(source, /from '(feathers-query|\.\.?\/)/)
      assert.match(source, /export async function up\(knex: Knex\): Promise<void>/)
      await migrate(workspace, url)

      await serving(async (http) => {
        const project = await http('POST', '/projects', { name: 'Launch' })
        assert.equal(project.status, 201, project.text)
        assert.equal(project.body.ownerId, undefined)
        const first = await http('POST', '/tasks', {
          title: 'Write',
          projectId: project.body.id,
          estimate: 1.5
        })
        assert.equal(first.status, 201, first.text)
        assert.equal(first.body.done, false)
        await http('POST', '/tasks', {
          title: 'Ship',
          projectId: project.body.id,
          due: '2026-12-01T10:00:00.000Z'
        })
        const label = await http('POST', '/labels', { name: 'urgent' })
        // The migration made the upsert key's unique index, which the start-up check looks for.
        const again = await http(
          'POST',
          '/labels',
          { name: 'urgent' },
          { prefer: 'resolution=merge-duplicates' }
        )
        assert.equal(again.status, 200, again.text)
        assert.equal(again.body.id, label.body.id)
        assert.equal(
          (await http('POST', '/task-labels', { taskId: first.body.id, labelId: label.body.id })).status,
          201
        )

        const undone = await http('GET', '/tasks?done=false')
        assert.deepEqual(
          undone.body.nodes.map((task: { title: string }) => task.title),
          ['Ship', 'Write']
        )
        const graphql = await http('POST', '/graphql', {
          query: `{ tasks(filter: { estimate: { gt: 1 } }) { edges { node { title project { name taskCount } labels { edges { node { name } } } } } }
                    taskAggregate { count { id } sum { estimate } } }`
        })
        assert.deepEqual(graphql.body.errors, undefined)
        assert.deepEqual(graphql.body.data.tasks.edges, [
          {
            node: {
              title: 'Write',
              project: { name: 'Launch', taskCount: 2 },
              labels: { edges: [{ node: { name: 'urgent' } }] }
            }
          }
        ])
        assert.deepEqual(graphql.body.data.taskAggregate, [{ count: { id: 2 }, sum: { estimate: 1.5 } }])
        // The text columns compare by code point: 'a ' is no 'a', and 'B' sorts before 'a'.
        await http('POST', '/labels', { name: 'a' })
        await http('POST', '/labels', { name: 'B' })
        assert.equal((await http('GET', '/labels?name=a%20')).body.nodes.length, 0)
        const sorted = await http('POST', '/graphql', {
          query: '{ labels(sorting: [{ field: name, direction: ASC }]) { edges { node { name } } } }'
        })
        assert.deepEqual(
          sorted.body.data.labels.edges.map((edge: { node: { name: string } }) => edge.node.name),
          ['B', 'a', 'urgent']
        )
        assert.equal((await http('DELETE', `/projects/${project.body.id}`)).status, 200)
      })
    })

    it('fails start-up naming the fields a changed schema has no column for, and its diff migration adds them', async () => {
      workspace.write('src/resources.ts', resources(ADDED_FIELDS, PROJECT_KEY))
      const { app, db } = loadApp(workspace)
      try {
        await assert.rejects(app.listen(0), (error: Error) => {
          assert.match(error.message, /Task\.priority: column tasks\.priority is missing \(missing\)/)
          assert.match(error.message, /Task\.note: column tasks\.note is missing \(missing\)/)
          assert.match(error.message, /Project: table projects has no unique index on exactly \(name\)/)
          return true
        })
      } finally {
        await db.destroy()
      }

      const diff = await command(['migration', 'src/app.ts', '--diff'])
      assert.equal(diff.code, 0, diff.stderr)
      const files = workspace.migrations()
      assert.equal(files.length, 2)
      assert.match(files[1], /_alter_projects_tasks\.ts$/)
      const source = readFileSync(files[1], 'utf8')
      assert.match(source, /alterTable\('tasks'/)
      assert.match(source, /table\.unique\(\['name'\]\)/)
      assert.match(source, /table\.dropUnique\(\['name'\]\)/)
      assert.doesNotMatch(source, /createTable/)
      await migrate(workspace, url)

      await serving(async (http) => {
        const project = await http('POST', '/projects', { name: 'Next' })
        const upserted = await http(
          'POST',
          '/projects',
          { name: 'Next' },
          { prefer: 'resolution=merge-duplicates' }
        )
        assert.equal(upserted.status, 200, upserted.text)
        await http('POST', '/tasks', { title: 'Plan', projectId: project.body.id, priority: 3, note: 'soon' })
        await http('POST', '/tasks', { title: 'Rest', projectId: project.body.id })
        const urgent = await http('GET', '/tasks?priority=3')
        assert.deepEqual(
          urgent.body.nodes.map((task: { title: string; note: string }) => [task.title, task.note]),
          [['Plan', 'soon']]
        )
        // Tasks written before the column existed have its default.
        assert.equal((await http('GET', '/tasks?priority=0')).body.totalCount, 3)
      })

      const again = await command(['migration', 'src/app.ts', '--diff'])
      assert.equal(again.code, 0, again.stderr)
      assert.match(again.stdout, /no migration written/)
      assert.equal(workspace.migrations().length, 2)
    })
  })
}
