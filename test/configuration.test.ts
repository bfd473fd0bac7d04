import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import {
  ConfigurationError,
  defineResource,
  feathersQuery,
  Field,
  FilterableField,
  IDField,
  type ResourceDefinition
} from '../src'

const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })

const parent = defineResource({
  name: 'Parent',
  schema: Type.Object({ id: IDField(Type.Integer()), name: FilterableField(Type.String()) })
})

function configure(...resources: ResourceDefinition[]) {
  return () => koa(feathers()).configure(feathersQuery({ Model: db, resources }))
}

describe('Configuration mistakes are reported at start-up', () => {
  after(() => db.destroy())

  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'a schema without an IDField',
      configure(
        defineResource({ name: 'NoId', schema: Type.Object({ name: FilterableField(Type.String()) }) })
      ),
      /NoId must have exactly one IDField, found 0/
    ],
    [
      'a property without an annotation',
      configure(
        defineResource({
          name: 'Bare',
          schema: Type.Object({ id: IDField(Type.Integer()), name: Type.String() })
        })
      ),
      /Bare\.name has no annotation/
    ],
    [
      'a relation naming an unknown resource',
      configure(
        parent,
        defineResource({
          name: 'Orphan',
          schema: Type.Object({ id: IDField(Type.Integer()) }),
          many: { children: { resource: 'Nobody', foreignKey: 'parentId' } }
        })
      ),
      /Orphan\.children relates to unknown resource "Nobody"/
    ],
    [
      'a relation naming an unknown field',
      configure(
        defineResource({
          name: 'Child',
          schema: Type.Object({ id: IDField(Type.Integer()), parentId: FilterableField(Type.Integer()) }),
          one: { parent: { resource: 'Parent', foreignKey: 'motherId' } }
        }),
        parent
      ),
      /Child: relation Child\.parent names unknown field "motherId"/
    ],
    [
      'an unsupported field type',
      configure(
        defineResource({
          name: 'Odd',
          schema: Type.Object({ id: IDField(Type.Integer()), tags: Field(Type.Array(Type.String())) })
        })
      ),
      /Odd\.tags has type "array"/
    ],
    [
      'a custom path without :id',
      configure(
        defineResource({
          ...parent,
          name: 'Pathless',
          basePath: 'pathless',
          update: { one: { path: 'rename' } }
        })
      ),
      /update\.one\.path "rename" must contain :id/
    ],
    [
      'defaultSort on an unknown field',
      configure(
        defineResource({
          ...parent,
          name: 'Sorted',
          basePath: 'sorted',
          query: { defaultSort: [{ field: 'nope', direction: 'ASC' }] }
        })
      ),
      /Sorted: query\.defaultSort names unknown field "nope"/
    ],
    [
      'an export batch size that is not a positive integer',
      configure(
        defineResource({ ...parent, name: 'Batched', basePath: 'batched', export: { batchSize: 0 } })
      ),
      /Batched: export\.batchSize must be a positive integer/
    ],
    [
      'an export batch time limit that is not a positive number',
      configure(
        defineResource({ ...parent, name: 'Timed', basePath: 'timed', export: { maxBatchMilliseconds: -1 } })
      ),
      /Timed: export\.maxBatchMilliseconds must be a positive number/
    ],
    [
      'an export date format that does not exist',
      configure(
        defineResource({
          ...parent,
          name: 'Dated',
          basePath: 'dated',
          export: { dateFormat: 'excel' as 'iso' }
        })
      ),
      /Dated: export\.dateFormat must be iso or spreadsheet, not excel/
    ],
    [
      'an export byte order mark that is not a boolean',
      configure(
        defineResource({
          ...parent,
          name: 'Marked',
          basePath: 'marked',
          export: { bom: 1 as unknown as boolean }
        })
      ),
      /Marked: export\.bom must be a boolean/
    ],
    [
      'a negative SQLite busy timeout',
      () => {
        const options = { Model: db, resources: [parent], sqlite: { busyTimeout: -1 } }
        return koa(feathers()).configure(feathersQuery(options))
      },
      /sqlite\.busyTimeout must be a number of milliseconds, 0 or more/
    ],
    [
      'a query limit that is not a positive integer',
      () => {
        const limits = { maxComparisons: 0 }
        koa(feathers()).configure(feathersQuery({ Model: db, resources: [parent], limits }))
      },
      /limits\.maxComparisons must be a positive integer/
    ],
    [
      'an aggregate group limit that is not a positive integer',
      configure(
        defineResource({ ...parent, name: 'Grouped', basePath: 'grouped', aggregate: { maxGroups: 0 } })
      ),
      /Grouped: aggregate\.maxGroups must be a positive integer/
    ],
    [
      // No statement of any request would ever run.
      'no connection for a GraphQL request',
      () =>
        koa(feathers()).configure(
          feathersQuery({
            Model: db,
            resources: [parent],
            graphql: { limits: { maxConcurrentStatements: 0 } }
          })
        ),
      /graphql\.limits\.maxConcurrentStatements must be a positive integer/
    ],
    [
      'a batch size that is neither false nor a non-negative integer',
      () =>
        koa(feathers()).configure(
          feathersQuery({ Model: db, resources: [parent], graphql: { maxBatchOperations: 2.5 } })
        ),
      /graphql\.maxBatchOperations must be false or a non-negative integer/
    ],
    [
      'keyset cursors with a paging strategy other than cursor',
      configure(
        defineResource({ ...parent, name: 'Pages', graphql: { pagingStrategy: 'offset', keyset: true } })
      ),
      /Pages\.graphql: keyset cursors need the cursor paging strategy/
    ],
    [
      'keyset cursors in the order of a filterOnly field',
      configure(
        defineResource({
          name: 'Secrets',
          schema: Type.Object({
            id: IDField(Type.Integer()),
            code: FilterableField(Type.String(), { filterOnly: true })
          }),
          query: { defaultSort: [{ field: 'code', direction: 'ASC' }] },
          graphql: { keyset: true }
        })
      ),
      /Secrets\.graphql: keyset cursors would carry Secrets\.code \(defaultSort\), which is not serialized/
    ],
    [
      'an unknown GraphQL paging strategy on a relation',
      configure(
        parent,
        defineResource({
          name: 'Lister',
          schema: Type.Object({ id: IDField(Type.Integer()) }),
          many: { parents: { resource: 'Parent', foreignKey: 'id', pagingStrategy: 'pages' as 'offset' } }
        })
      ),
      /relation Lister\.parents: pagingStrategy must be one of cursor, offset, none/
    ],
    [
      'a SQL-computed field missing from the schema',
      configure(
        defineResource({ ...parent, name: 'Counts', sqlComputed: { total: ({ knex }) => knex.raw('1') } })
      ),
      /Counts: sqlComputed field "total" is not in the schema/
    ],
    [
      'a SQL-computed id',
      configure(defineResource({ ...parent, name: 'Ids', sqlComputed: { id: ({ knex }) => knex.raw('1') } })),
      /Ids\.id is computed in SQL, so it is neither an IDField nor computed/
    ],
    [
      'a SQL-computed foreign key',
      configure(
        defineResource({ ...parent, many: { kids: { resource: 'Kid', foreignKey: 'parentId' } } }),
        defineResource({
          name: 'Kid',
          schema: Type.Object({ id: IDField(Type.Integer()), parentId: FilterableField(Type.Integer()) }),
          sqlComputed: { parentId: ({ knex }) => knex.raw('1') }
        })
      ),
      /relation Parent\.kids names SQL-computed field "parentId"/
    ],
    [
      "a field named as a to-many relation's generated filter key (kidsNone)",
      configure(
        defineResource({
          name: 'Parent',
          schema: Type.Object({ id: IDField(Type.Integer()), kidsNone: FilterableField(Type.Boolean()) }),
          many: { kids: { resource: 'Kid', foreignKey: 'parentId' } }
        }),
        defineResource({
          name: 'Kid',
          schema: Type.Object({ id: IDField(Type.Integer()), parentId: FilterableField(Type.Integer()) })
        })
      ),
      /Parent\.kidsNone: the field "kidsNone" has the name of the filter key generated for the to-many relation "kids"/
    ],
    [
      "a relation named as a to-many relation's generated filter key (kidsEvery)",
      configure(
        defineResource({
          ...parent,
          many: {
            kids: { resource: 'Kid', foreignKey: 'parentId' },
            kidsEvery: { resource: 'Kid', foreignKey: 'parentId' }
          }
        }),
        defineResource({
          name: 'Kid',
          schema: Type.Object({ id: IDField(Type.Integer()), parentId: FilterableField(Type.Integer()) })
        })
      ),
      /Parent\.kidsEvery: the relation "kidsEvery" has the name of the filter key generated for the to-many relation "kids"/
    ]
  ]

  for (const [title, start, message] of cases) {
    it(`refuses ${title}`, async () => {
      await assert.rejects(
        // Relations and the surfaces are checked when the application is set up, as `app.listen` does.
        async () => {
          const app = start() as { setup?: () => Promise<unknown> } | undefined
          await app?.setup?.()
        },
        (error: unknown) => error instanceof ConfigurationError && message.test(error.message)
      )
    })
  }
})

describe('npm start with bad settings exits non-zero with a clear message', () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', resolve(__dirname, '../example/main.ts')], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 30000
    })

  it('names an unsupported DATABASE_URL scheme', function () {
    this.timeout(40000)
    const run = start({ DATABASE_URL: 'mongodb://localhost/app', PORT: '0' })
    assert.equal(run.status, 1)
    assert.match(run.stderr, /Unsupported DATABASE_URL "mongodb:\/\/localhost\/app"/)
  })

  for (const scheme of ['mysql', 'postgres']) {
    it(`names an unreachable ${scheme} database, without its password, and gives up quickly`, function () {
      this.timeout(40000)
      const started = Date.now()
      const run = start({ DATABASE_URL: `${scheme}://root:secret@127.0.0.1:1/app`, PORT: '0' })
      assert.equal(run.status, 1)
      assert.match(
        run.stderr,
        new RegExp(`Cannot use the database at ${scheme}://root:\\*\\*\\*@127\\.0\\.0\\.1:1/app`)
      )
      assert.ok(!run.stderr.includes('secret'))
      assert.ok(Date.now() - started < 20000)
    })
  }
})
