import assert from 'node:assert/strict'
import knex from 'knex'
import { randomBytes } from 'node:crypto'
import { createClient as createRedisClient } from 'redis'
import type { Client } from 'graphql-ws'
import { forEachDatabase, startServer, type TestServer } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'
import { graphqlWsClient } from './support/graphql-ws'
import { pluginApp } from './support/plugin-app'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import { io } from 'socket.io-client'
import { reachable, REDIS } from './support/instances'
import { feathersQuery, type BudgetOptions } from '../src'
import { accessToken, bearer, jwtApp, useJwtAuthentication } from './support/auth-app'

/** Each test spends the budget of a caller of its own, named in a header; `none` has no budget. */
const byCallerHeader = (params: { headers?: Record<string, unknown> }) => {
  const caller = params.headers?.['x-caller']
  if (caller === 'none') return undefined
  return typeof caller === 'string' ? caller : 'anonymous'
}

function budgetApp(budgets: BudgetOptions) {
  return async (databaseUrl: string) => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    return pluginApp(db, exampleResources, { transports: true, plugin: { budgets } })
  }
}

const as = (caller: string) => ({ 'x-caller': caller })

const remaining = (response: { headers: Headers }) => Number(response.headers.get('ratelimit-remaining'))

const OPERATION = '{ todoItems(paging: { first: 2 }) { edges { node { id title } } } }'

forEachDatabase(
  'Budgets per caller (memory)',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      await seedTodoItems(env.server.db, [{ title: 'a' }, { title: 'b' }, { title: 'c' }, { title: 'd' }])
    })

    it('REST reads spend rows answered; past the budget a 429 with Retry-After, before any SQL', async () => {
      const { http } = env.server
      const first = await http('GET', '/todo-items?limit=3', undefined, as('rest'))
      assert.equal(first.status, 200)
      assert.equal(first.headers.get('ratelimit-limit'), '5')
      assert.equal(remaining(first), 2)
      assert.ok(Number(first.headers.get('ratelimit-reset')) >= 59)
      const one = await http('GET', `/todo-items/${first.body.nodes[0].id}`, undefined, as('rest'))
      assert.equal(one.status, 200)
      assert.equal(remaining(one), 1)
      // What is left (1) admits one more read, which pays what it answered: one read past the budget at most.
      const last = await http('GET', '/todo-items?limit=3', undefined, as('rest'))
      assert.equal(last.status, 200)
      assert.equal(remaining(last), 0)
      let refused: { status: number; body: any; headers: Headers } | undefined
      const statements = await env.server.countStatements(async () => {
        refused = await http('GET', '/todo-items', undefined, as('rest'))
      })
      assert.equal(refused!.status, 429)
      assert.equal(refused!.body.name, 'TooManyRequests')
      assert.equal(refused!.body.data.budget, 'rows')
      assert.ok(Number(refused!.headers.get('retry-after')) >= 1)
      assert.equal(refused!.headers.get('ratelimit-remaining'), '0')
      assert.equal(statements, 0)
      // Another caller has a budget of its own, and a call without a key none at all.
      assert.equal((await http('GET', '/todo-items?limit=3', undefined, as('other'))).status, 200)
      const free = await http('GET', '/todo-items', undefined, as('none'))
      assert.equal(free.status, 200)
      assert.equal(free.headers.get('ratelimit-limit'), null)
    })

    it("an aggregate spends its groups, through Feathers' REST transport too", async () => {
      const { http } = env.server
      const groups = await http(
        'GET',
        '/todo-items/aggregate?groupBy=title&count=id',
        undefined,
        as('groups')
      )
      assert.equal(groups.status, 200)
      assert.equal(remaining(groups), 1)
      const feathers = await http('GET', '/todo-items?$limit=1', undefined, {
        ...as('groups'),
        'x-query-syntax': 'feathers'
      })
      assert.equal(feathers.status, 200)
      assert.equal(remaining(feathers), 0)
      const refused = await http('GET', '/todo-items?$limit=1', undefined, {
        ...as('groups'),
        'x-query-syntax': 'feathers'
      })
      assert.equal(refused.status, 429)
      assert.ok(refused.headers.get('retry-after'))
    })

    it('an export spends exportRows and ends where the budget does; then 429', async () => {
      const { http } = env.server
      const exported = await fetch(`${env.server.baseUrl}/todo-items/export`, {
        headers: { ...as('export'), accept: 'application/x-ndjson' }
      })
      assert.equal(exported.status, 200)
      assert.equal((await exported.text()).trim().split('\n').length, 3)
      const refused = await http('GET', '/todo-items/export', undefined, as('export'))
      assert.equal(refused.status, 429)
      assert.equal(refused.body.data.budget, 'exportRows')
      // The export's pages did not spend the caller's rows.
      const list = await http('GET', '/todo-items?limit=1', undefined, as('export'))
      assert.equal(remaining(list), 4)
    })

    it('GraphQL operations spend their cost before they run: RATE_LIMITED, HTTP 429, no SQL', async () => {
      const first = await env.server.http('POST', '/graphql', { query: OPERATION }, as('graphql'))
      assert.equal(first.status, 200)
      const cost = 40 - remaining(first)
      assert.ok(cost > 1, `cost ${cost}`)
      let response = first
      while (response.status === 200) {
        response = await env.server.http('POST', '/graphql', { query: OPERATION }, as('graphql'))
      }
      assert.equal(response.status, 429)
      assert.equal(response.body.errors[0].extensions.code, 'RATE_LIMITED')
      assert.ok(Number(response.headers.get('retry-after')) >= 1)
      const statements = await env.server.countStatements(() =>
        graphql(env.server, OPERATION, undefined, as('graphql'))
      )
      assert.equal(statements, 0)
      assert.equal((await graphql(env.server, OPERATION, undefined, as('graphql-other'))).status, 200)
    })

    it('each operation of a batch spends its cost: a batch is no way around the budget', async () => {
      const batch = Array.from({ length: 3 }, () => ({ query: OPERATION }))
      const results: any[] = []
      for (let round = 0; round < 10; round++) {
        const response = await env.server.http('POST', '/graphql', batch, as('batch'))
        results.push(...(Array.isArray(response.body) ? response.body : [response.body]))
      }
      const refused = results.filter((result) => result.errors?.[0]?.extensions?.code === 'RATE_LIMITED')
      const answered = results.filter((result) => result.data?.todoItems)
      // A budget of 40 pays for a few operations of this cost, whether they come alone or in batches.
      assert.ok(answered.length > 0 && answered.length < 10, `answered ${answered.length}`)
      assert.equal(refused.length, results.length - answered.length)
    })

    it('socket.io calls spend rows; past the budget a TooManyRequests error', async () => {
      const socket = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        extraHeaders: as('socket')
      })
      try {
        const find = () =>
          new Promise<any>((resolve) =>
            socket.emit('find', 'todo-items', { $limit: 3 }, (error: unknown, result: unknown) =>
              resolve(error ? { error } : { result })
            )
          )
        assert.equal((await find()).result.data.length, 3)
        assert.equal((await find()).result.data.length, 3)
        const refused = await find()
        assert.equal(refused.error?.name, 'TooManyRequests')
        assert.equal(refused.error?.code, 429)
        assert.ok(refused.error?.data?.retryAfter >= 1)
      } finally {
        socket.close()
      }
    })

    it('GraphQL queries over WebSocket spend their cost too', async () => {
      const client: Client = graphqlWsClient(env.server)
      try {
        const run = () =>
          new Promise<{ errors?: Array<{ extensions?: { code?: string } }> }>((resolve) => {
            let answer = {}
            client.subscribe(
              { query: OPERATION },
              {
                next: (result) => (answer = result),
                error: (error) => resolve({ errors: (Array.isArray(error) ? error : [error]) as never }),
                complete: () => resolve(answer)
              }
            )
          })
        let answer = await run()
        for (let runs = 0; !answer.errors && runs < 50; runs++) answer = await run()
        assert.equal(answer.errors?.[0]?.extensions?.code, 'RATE_LIMITED')
      } finally {
        await client.dispose()
      }
    })

    it('a subscription spends one of subscriptions when it starts', async () => {
      const client: Client = graphqlWsClient(env.server)
      try {
        const errors: Array<{ extensions?: { code?: string } }> = []
        const subscribe = () =>
          new Promise<void>((resolve) => {
            const stop = client.subscribe(
              { query: 'subscription { createdTodoItem { id } }' },
              {
                next: () => {},
                error: (error) => {
                  errors.push(...((Array.isArray(error) ? error : [error]) as typeof errors))
                  resolve()
                },
                complete: resolve
              }
            )
            // The first is admitted and runs until stopped.
            setTimeout(() => {
              stop()
              resolve()
            }, 300)
          })
        await subscribe()
        assert.equal(errors.length, 0)
        await subscribe()
        assert.equal(errors[0]?.extensions?.code, 'RATE_LIMITED')
      } finally {
        await client.dispose()
      }
    })
  },
  budgetApp({
    window: '1m',
    rows: 5,
    exportRows: 3,
    graphqlCost: 40,
    subscriptions: 1,
    key: byCallerHeader
  })
)

/** The example resources behind JWT authentication, with budgets from the configuration and the default key. */
async function authenticatedApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  const app = jwtApp()
  app.set('feathersQuery', { budgets: { window: '1m', rows: 2 } })
  useJwtAuthentication(app)
  app.configure(feathersQuery({ Model: db, resources: exampleResources, logger: { error: () => {} } }))
  return { app, db }
}

forEachDatabase(
  'Budgets per caller: the default key',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      await seedTodoItems(env.server.db, [{ title: 'a' }, { title: 'b' }])
    })

    it("is the token's user, else the address; a token that does not verify pays by address", async () => {
      const { http } = env.server
      const [ann, bob] = await Promise.all(['ann', 'bob'].map((user) => accessToken(env.server, user)))
      assert.equal(remaining(await http('GET', '/todo-items?limit=2', undefined, bearer(ann))), 0)
      assert.equal((await http('GET', '/todo-items', undefined, bearer(ann))).status, 429)
      assert.equal(remaining(await http('GET', '/todo-items?limit=2', undefined, bearer(bob))), 0)
      assert.equal(remaining(await http('GET', '/todo-items?limit=1')), 1)
      assert.equal(remaining(await http('GET', '/todo-items?limit=1', undefined, bearer('forged'))), 0)
      assert.equal((await http('GET', '/todo-items')).status, 429)
    })
  },
  authenticatedApp
)

describe('Budgets per caller: options', () => {
  it('refuses a window or budget it cannot count by, at configuration', () => {
    for (const budgets of [
      { window: 'soon', rows: 1 },
      { window: 0, rows: 1 },
      { window: '1m', rows: 0 },
      { window: '1m', rowz: 1 },
      { window: '1m', store: { redis: {} } }
    ]) {
      const db = knex({
        client: 'better-sqlite3',
        connection: { filename: ':memory:' },
        useNullAsDefault: true
      })
      assert.throws(
        () => pluginApp(db, exampleResources, { plugin: { budgets: budgets as BudgetOptions } }),
        (error: Error) => error.name === 'ConfigurationError' && /budgets/.test(error.message),
        JSON.stringify(budgets)
      )
      void db.destroy()
    }
  })
})

describe('Budgets per caller: two instances sharing a Redis store', function () {
  const prefix = `fq-test-budget-${process.pid}-${randomBytes(4).toString('hex')}:`
  const redisClients: Array<ReturnType<typeof createRedisClient>> = []
  const servers: TestServer[] = []

  before(async function () {
    this.timeout(60000)
    if (!(await reachable(REDIS))) {
      console.log(`    (skipped: Redis is not reachable on ${REDIS.host}:${REDIS.port})`)
      return this.skip()
    }
    for (let instance = 0; instance < 2; instance++) {
      const redis = createRedisClient({ url: `redis://${REDIS.host}:${REDIS.port}` })
      await redis.connect()
      redisClients.push(redis)
      const budgets: BudgetOptions = {
        window: 60_000,
        rows: 10,
        key: byCallerHeader,
        store: { redis, prefix }
      }
      const server = await startServer('sqlite', budgetApp(budgets))
      await seedTodoItems(server.db, [{ title: 'a' }, { title: 'b' }])
      servers.push(server)
    }
  })

  after(async () => {
    for (const server of servers) await server.close()
    for (const redis of redisClients) {
      for (const key of await redis.keys(`${prefix}*`)) await redis.del(key)
      await redis.quit()
    }
  })

  it('spends one budget from both, and reads at once never overspend it', async () => {
    const [a, b] = servers
    const first = await a.http('GET', '/todo-items/1', undefined, as('shared'))
    assert.equal(remaining(first), 9)
    const second = await b.http('GET', '/todo-items/1', undefined, as('shared'))
    assert.equal(remaining(second), 8)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (index % 2 ? a : b).http('GET', '/todo-items/1', undefined, as('shared'))
      )
    )
    assert.equal(answers.filter((answer) => answer.status === 200).length, 8)
    assert.equal(answers.filter((answer) => answer.status === 429).length, 12)
    const ttl = await redisClients[0].pTTL(`${prefix}rows:shared`)
    assert.ok(ttl > 0 && ttl <= 60_000, `ttl ${ttl}`)
  })
})
