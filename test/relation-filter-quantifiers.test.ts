import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { io } from 'socket.io-client'
import { forEachDatabase } from './support/server'
import { clearTables, seedLinks, seedSubTasks, seedTags, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { relationAppWithTransports } from './support/relation-app'
import { exampleResourcesApp } from './support/example-resources-app'
import { Channel } from '@feathersjs/transport-commons'
import { authorizedPublisher, defineResource, QUERY_SYNTAX_HEADER } from '../src'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'

/**
 * `RNone` and `REvery` beside `R`: no related record matches, every one does. The expected titles are worked
 * out here from the seeded rows with SQL's three-valued logic, and only what the caller may read of the related
 * side counts (relationApp: sub-tasks and tags named `secret...` are for admins, links to the tag named in
 * `x-hidden-tag` are hidden, sub-tasks, tags and links are soft-deleted).
 */

const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }
const ADMIN = { 'x-role': 'admin' }

interface Child {
  parent: string
  title: string
  completed: boolean
  description: string | null
  deleted?: boolean
}

interface Link {
  parent: string
  tag: string
  deleted?: boolean
}

const PARENTS = [
  'allDone',
  'allOpen',
  'deletedOpen',
  'empty',
  'hiddenOpen',
  'mixed',
  'nullDescription',
  'onlyHidden'
]

const CHILDREN: Child[] = [
  { parent: 'allDone', title: 'd1', completed: true, description: 'x' },
  { parent: 'allDone', title: 'd2', completed: true, description: 'x' },
  { parent: 'mixed', title: 'm1', completed: true, description: 'x' },
  { parent: 'mixed', title: 'm2', completed: false, description: 'y' },
  { parent: 'allOpen', title: 'o1', completed: false, description: 'x' },
  { parent: 'allOpen', title: 'o2', completed: false, description: 'x' },
  { parent: 'nullDescription', title: 'n1', completed: true, description: null },
  { parent: 'nullDescription', title: 'n2', completed: true, description: 'x' },
  { parent: 'deletedOpen', title: 'dd1', completed: true, description: 'x' },
  { parent: 'deletedOpen', title: 'dd2', completed: false, description: 'x', deleted: true },
  { parent: 'hiddenOpen', title: 'h1', completed: true, description: 'x' },
  { parent: 'hiddenOpen', title: 'secret-h2', completed: false, description: 'x' },
  { parent: 'onlyHidden', title: 'secret-only', completed: false, description: 'x' }
]

const TAGS = [{ name: 'home' }, { name: 'work' }, { name: 'secret-t' }, { name: 'gone', deleted: true }]

const LINKS: Link[] = [
  { parent: 'allDone', tag: 'home' },
  { parent: 'mixed', tag: 'home' },
  { parent: 'mixed', tag: 'work' },
  { parent: 'allOpen', tag: 'work' },
  { parent: 'nullDescription', tag: 'home' },
  { parent: 'nullDescription', tag: 'secret-t' },
  { parent: 'deletedOpen', tag: 'home' },
  { parent: 'deletedOpen', tag: 'gone' },
  { parent: 'hiddenOpen', tag: 'work' },
  { parent: 'hiddenOpen', tag: 'home', deleted: true },
  { parent: 'onlyHidden', tag: 'secret-t' }
]

interface Caller {
  admin?: boolean
  hiddenTag?: string
}

const headersOf = (caller: Caller): Record<string, string> => ({
  ...(caller.admin ? ADMIN : {}),
  ...(caller.hiddenTag ? { 'x-hidden-tag': caller.hiddenTag } : {})
})

const readable = (name: string, caller: Caller) => caller.admin || !name.startsWith('secret')

/** The sub-tasks of `parent` the caller may read, soft-deleted ones left out. */
const childrenOf = (parent: string, caller: Caller) =>
  CHILDREN.filter((child) => child.parent === parent && !child.deleted && readable(child.title, caller))

/** The tags of `parent` the caller may read through links it may read. */
const tagsOf = (parent: string, caller: Caller) =>
  LINKS.filter((link) => link.parent === parent && !link.deleted)
    .map((link) => TAGS.find((tag) => tag.name === link.tag)!)
    .filter((tag) => !tag.deleted && readable(tag.name, caller) && tag.name !== caller.hiddenTag)

/** SQL's truth: true, false or null (unknown). */
type Truth = boolean | null

const none = <T>(rows: T[], condition: (row: T) => Truth) => rows.every((row) => condition(row) !== true)
const every = <T>(rows: T[], condition: (row: T) => Truth) => rows.every((row) => condition(row) === true)
const some = <T>(rows: T[], condition: (row: T) => Truth) => rows.some((row) => condition(row) === true)
/** `description = value`, unknown when the description is NULL. */
const descriptionIs = (value: string) => (child: Child) =>
  child.description === null ? null : child.description === value
const open = (child: Child) => !child.completed

const expected = (caller: Caller, test: (parent: string) => boolean) => PARENTS.filter(test)

async function seed(db: Parameters<typeof clearTables>[0]) {
  await clearTables(db)
  const parentIds = await seedTodoItems(
    db,
    PARENTS.map((title) => ({ title }))
  )
  const parentId = (title: string) => parentIds[PARENTS.indexOf(title)]
  const childIds = await seedSubTasks(
    db,
    CHILDREN.map((child) => ({
      todoItemId: parentId(child.parent),
      title: child.title,
      completed: child.completed,
      description: child.description
    }))
  )
  const deletedChildren = childIds.filter((_, index) => CHILDREN[index].deleted)
  await db('sub_tasks').whereIn('id', deletedChildren).update({ deletedAt: new Date() })
  const tagIds = await seedTags(
    db,
    TAGS.map((tag) => tag.name)
  )
  const tagId = (name: string) => tagIds[TAGS.findIndex((tag) => tag.name === name)]
  await db('tags')
    .where({ id: tagId('gone') })
    .update({ deletedAt: new Date() })
  await seedLinks(
    db,
    LINKS.map((link) => [parentId(link.parent), tagId(link.tag)])
  )
  for (const link of LINKS.filter((link) => link.deleted)) {
    await db('todo_item_tags')
      .where({ todoItemId: parentId(link.parent), tagId: tagId(link.tag) })
      .update({ deletedAt: new Date() })
  }
}

const CALLERS: Array<[string, Caller]> = [
  ['a user', {}],
  ['an admin', { admin: true }],
  ['a user without the links to "work"', { hiddenTag: 'work' }]
]

forEachDatabase(
  'Relation filters none and every',
  (env) => {
    before(async function () {
      this.timeout(60000)
      await seed(env.server.db)
    })

    const titlesOf = async (filter: string, caller: Caller = {}) => {
      const response = await graphql(
        env.server,
        `{ todoItems(filter: ${filter}, paging: { first: 50 }, sorting: [{ field: title, direction: ASC }]) {
            totalCount edges { node { title } } } }`,
        undefined,
        headersOf(caller)
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const { totalCount, edges } = response.data.todoItems
      assert.equal(totalCount, edges.length)
      return edges.map((edge: any) => edge.node.title)
    }

    for (const [who, caller] of CALLERS) {
      it(`some, none and every of one-to-many sub-tasks, for ${who}: hidden and soft-deleted ones never decide`, async () => {
        const children = (parent: string) => childrenOf(parent, caller)
        // The three in turn with the same inner filter: their statements must not be mixed up.
        const openFilter = '{ completed: { is: false } }'
        assert.deepEqual(
          await titlesOf(`{ subTasks: ${openFilter} }`, caller),
          expected(caller, (parent) => some(children(parent), open))
        )
        assert.deepEqual(
          await titlesOf(`{ subTasksNone: ${openFilter} }`, caller),
          expected(caller, (parent) => none(children(parent), open))
        )
        assert.deepEqual(
          await titlesOf(`{ subTasksEvery: ${openFilter} }`, caller),
          expected(caller, (parent) => every(children(parent), open))
        )
        assert.deepEqual(
          await titlesOf('{ subTasksEvery: { completed: { is: true } } }', caller),
          expected(caller, (parent) => every(children(parent), (child) => child.completed))
        )
        // `{}`: no related record at all; every parent.
        assert.deepEqual(
          await titlesOf('{ subTasksNone: {} }', caller),
          expected(caller, (parent) => children(parent).length === 0)
        )
        assert.deepEqual(await titlesOf('{ subTasksEvery: {} }', caller), PARENTS)
      })

      it(`a NULL in the compared field is unknown: it fails every and does not match for none (${who})`, async () => {
        const children = (parent: string) => childrenOf(parent, caller)
        const every_x = expected(caller, (parent) => every(children(parent), descriptionIs('x')))
        assert.ok(!every_x.includes('nullDescription'))
        assert.deepEqual(await titlesOf('{ subTasksEvery: { description: { eq: "x" } } }', caller), every_x)
        const notX = (child: Child) => {
          const is = descriptionIs('x')(child)
          return is === null ? null : !is
        }
        const noneNotX = expected(caller, (parent) => none(children(parent), notX))
        assert.ok(noneNotX.includes('nullDescription'))
        assert.deepEqual(await titlesOf('{ subTasksNone: { description: { neq: "x" } } }', caller), noneNotX)
        assert.deepEqual(
          await titlesOf('{ subTasksEvery: { description: { is: null } } }', caller),
          expected(caller, (parent) => every(children(parent), (child) => child.description === null))
        )
      })

      it(`many-to-many tags through links with their own scope (${who})`, async () => {
        const tags = (parent: string) => tagsOf(parent, caller)
        const home = (tag: { name: string }) => tag.name === 'home'
        assert.deepEqual(
          await titlesOf('{ tagsNone: { name: { eq: "home" } } }', caller),
          expected(caller, (parent) => none(tags(parent), home))
        )
        assert.deepEqual(
          await titlesOf('{ tagsEvery: { name: { eq: "home" } } }', caller),
          expected(caller, (parent) => every(tags(parent), home))
        )
        assert.deepEqual(
          await titlesOf('{ tagsNone: {} }', caller),
          expected(caller, (parent) => tags(parent).length === 0)
        )
      })

      it(`nests and composes with and/or (${who})`, async () => {
        const children = (parent: string) => childrenOf(parent, caller)
        const tags = (parent: string) => tagsOf(parent, caller)
        const work = (tag: { name: string }) => tag.name === 'work'
        // A none inside a one-relation inside an every: three levels, the most there may be, so not for a
        // caller whose link scope (a relation filter by the tag) adds a fourth.
        if (!caller.hiddenTag) {
          assert.deepEqual(
            await titlesOf(
              '{ subTasksEvery: { completed: { is: true }, todoItem: { tagsNone: { name: { eq: "work" } } } } }',
              caller
            ),
            expected(caller, (parent) =>
              every(children(parent), (child) => child.completed && none(tags(child.parent), work))
            )
          )
        }
        assert.deepEqual(
          await titlesOf(
            '{ or: [{ subTasksNone: {} }, { and: [{ subTasksEvery: { completed: { is: true } } }, { tags: {} }] }] }',
            caller
          ),
          expected(
            caller,
            (parent) =>
              children(parent).length === 0 ||
              (every(children(parent), (child) => child.completed) && tags(parent).length > 0)
          )
        )
        // Sub-tasks whose parent has no open sub-task and only home tags.
        const response = await graphql(
          env.server,
          `
            {
              subTasks(
                filter: {
                  todoItem: {
                    subTasksNone: { completed: { is: false } }
                    tagsEvery: { name: { eq: "home" } }
                  }
                }
                sorting: [{ field: title, direction: ASC }]
                paging: { first: 50 }
              ) {
                edges {
                  node {
                    title
                  }
                }
              }
            }
          `,
          undefined,
          headersOf(caller)
        )
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        const wanted = CHILDREN.filter(
          (child) =>
            !child.deleted &&
            readable(child.title, caller) &&
            none(children(child.parent), open) &&
            every(tags(child.parent), (tag) => tag.name === 'home')
        )
          .map((child) => child.title)
          .sort()
        assert.deepEqual(
          response.data.subTasks.edges.map((edge: any) => edge.node.title),
          wanted
        )
      })
    }

    it('in aggregate filters and relation connection filters, one statement per list as for R', async () => {
      const query = (filter: string) => `{
          todoItemAggregate(filter: ${filter}) { count { id } }
          todoItems(filter: ${filter}, paging: { first: 50 }) { totalCount }
        }`
      const children = (parent: string) => childrenOf(parent, {})
      const someCount = await env.server.countStatements(() =>
        graphql(env.server, query('{ subTasks: { completed: { is: false } } }'))
      )
      for (const [key, holds] of [
        ['subTasksNone', (parent: string) => none(children(parent), open)],
        ['subTasksEvery', (parent: string) => every(children(parent), open)]
      ] as const) {
        let response: any
        const count = await env.server.countStatements(async () => {
          response = await graphql(env.server, query(`{ ${key}: { completed: { is: false } } }`))
        })
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        const wanted = PARENTS.filter(holds).length
        assert.deepEqual(response.data.todoItemAggregate, [{ count: { id: wanted } }])
        assert.equal(response.data.todoItems.totalCount, wanted)
        assert.equal(count, someCount)
      }

      // Tag.todoItems(filter): the parents of each tag, filtered by their sub-tasks.
      const response = await graphql(
        env.server,
        `
          {
            tags(sorting: [{ field: name, direction: ASC }]) {
              edges {
                node {
                  name
                  todoItems(
                    filter: { subTasksEvery: { completed: { is: true } } }
                    sorting: [{ field: title, direction: ASC }]
                  ) {
                    edges {
                      node {
                        title
                      }
                    }
                  }
                }
              }
            }
          }
        `,
        undefined,
        ADMIN
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const admin = { admin: true }
      const wanted = TAGS.filter((tag) => !tag.deleted)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((tag) => [
          tag.name,
          PARENTS.filter(
            (parent) =>
              tagsOf(parent, admin).some((visible) => visible.name === tag.name) &&
              every(childrenOf(parent, admin), (child) => child.completed)
          )
        ])
      assert.deepEqual(
        response.data.tags.edges.map((edge: any) => [
          edge.node.name,
          edge.node.todoItems.edges.map((item: any) => item.node.title)
        ]),
        wanted
      )
    })

    it('REST in Feathers query syntax, and through the Feathers REST and socket.io clients', async () => {
      const children = (parent: string) => childrenOf(parent, {})
      const noneOpen = expected({}, (parent) => none(children(parent), open))
      const everyDone = expected({}, (parent) => every(children(parent), (child) => child.completed))
      const rest = await env.server.http(
        'GET',
        '/todo-items?subTasksNone[completed]=false&$sort[title]=1&$limit=50',
        undefined,
        FEATHERS
      )
      assert.equal(rest.status, 200, rest.text)
      assert.deepEqual(
        rest.body.data.map((item: any) => item.title),
        noneOpen
      )

      const restApp = feathers()
      restApp.configure(restClient(env.server.baseUrl).fetch(fetch, { headers: FEATHERS }))
      const connection = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      try {
        const socketApp = feathers()
        socketApp.configure(socketioClient(connection))
        for (const client of [restApp, socketApp] as any[]) {
          const query = { subTasksEvery: { completed: true }, $sort: { title: 1 }, $limit: 50 }
          const page = await client.service('todo-items').find({ query })
          assert.deepEqual(
            page.data.map((item: any) => item.title),
            everyDone
          )
          const tagged = await client.service('todo-items').find({
            query: { $or: [{ tagsNone: {} }, { subTasksNone: { completed: false } }], $sort: { title: 1 } }
          })
          assert.deepEqual(
            tagged.data.map((item: any) => item.title),
            expected({}, (parent) => tagsOf(parent, {}).length === 0 || none(children(parent), open))
          )
          await assert.rejects(
            client.service('sub-tasks').find({ query: { todoItemNone: { title: 'x' } } }),
            {
              name: 'BadRequest'
            }
          )
        }
      } finally {
        connection.close()
      }
    })

    it('refuses none and every on a to-one relation, an unknown relation, and where relations are not taken', async () => {
      const toOne = await env.server.http('GET', '/sub-tasks?todoItemNone[title]=x', undefined, FEATHERS)
      assert.equal(toOne.status, 400, toOne.text)
      assert.equal(toOne.body.errors[0].field, 'todoItemNone')
      assert.match(toOne.body.errors[0].message, /none and every apply to to-many relations/)
      const unknown = await env.server.http('GET', '/todo-items?nopeEvery[title]=x', undefined, FEATHERS)
      assert.equal(unknown.status, 400, unknown.text)
      assert.equal(unknown.body.errors[0].field, 'nopeEvery')
      const inner = await env.server.http('GET', '/todo-items?subTasksNone[nope]=1', undefined, FEATHERS)
      assert.equal(inner.status, 400, inner.text)
      assert.equal(inner.body.errors[0].field, 'subTasksNone.nope')
      const notAQuery = await env.server.http('GET', '/todo-items?tagsEvery=home', undefined, FEATHERS)
      assert.equal(notAQuery.status, 400, notAQuery.text)
      assert.equal(notAQuery.body.errors[0].field, 'tagsEvery')
      // The spec REST list and the CSV export take equality parameters only.
      assert.equal((await env.server.http('GET', '/todo-items?subTasksNone=1')).status, 400)
      const exported = await env.server.http('GET', '/todo-items/export?subTasksEvery=1')
      assert.ok([400, 404].includes(exported.status), `${exported.status} ${exported.text}`)
      // Internal callers alike.
      await assert.rejects(
        (env.server.app.service('sub-tasks') as any).find({ query: { todoItemEvery: { title: 'x' } } }),
        (error: any) =>
          error.name === 'BadRequest' &&
          error.errors[0].field === 'todoItemEvery' &&
          /to-many relations/.test(error.errors[0].message)
      )
      // GraphQL types have no such field.
      const graphqlToOne = await graphql(
        env.server,
        '{ subTasks(filter: { todoItemNone: {} }) { totalCount } }'
      )
      assert.deepEqual(codes(graphqlToOne), ['GRAPHQL_VALIDATION_FAILED'])
      // Subscription filters have no relation filters (events are matched in memory, without the related rows).
      const subscription = await graphql(
        env.server,
        'subscription { createdTodoItem(input: { filter: { subTasksNone: {} } }) { id } }'
      )
      assert.deepEqual(codes(subscription), ['GRAPHQL_VALIDATION_FAILED'])
      assert.match(
        subscription.errors![0].message,
        /"subTasksNone" is not defined by type "TodoItemSubscriptionFilter"/
      )
    })

    it('nests at most maxRelationDepth levels, the quantified ones counted as R', async () => {
      const response = await graphql(
        env.server,
        `
          {
            todoItems(
              filter: { subTasksEvery: { todoItem: { subTasksNone: { todoItem: { title: { eq: "x" } } } } } }
            ) {
              totalCount
            }
          }
        `
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      assert.equal(
        response.errors![0].extensions.errors![0].field,
        'subTasksEvery.todoItem.subTasksNone.todoItem'
      )
    })
  },
  relationAppWithTransports
)

forEachDatabase(
  'Relation filters none and every: limits',
  (env) => {
    it('count in the operation cost and against maxRelationFilters as R does', async () => {
      const query = (filters: string[]) =>
        `{ todoItems(paging: { first: 1 }, filter: { and: [${filters.join(', ')}] }) { edges { node { id } } } }`
      const two = await graphql(env.server, query(['{ subTasksNone: {} }', '{ tagsEvery: {} }']))
      assert.equal(two.errors, undefined, JSON.stringify(two.errors))
      const three = await graphql(
        env.server,
        query(['{ subTasksNone: {} }', '{ tagsEvery: {} }', '{ subTasksEvery: {} }'])
      )
      assert.deepEqual(codes(three), ['QUERY_TOO_COMPLEX'])
      const variables = await graphql(
        env.server,
        'query ($filter: TodoItemFilter!) { todoItems(filter: $filter) { totalCount } }',
        { filter: { or: [{ subTasksNone: {} }, { tagsEvery: {} }, { subTasks: {} }] } }
      )
      assert.deepEqual(codes(variables), ['BAD_USER_INPUT'])
      assert.match(variables.errors![0].extensions.errors![0].message, /at most 2 relation filters/)
    })
  },
  exampleResourcesApp({ graphql: { limits: { maxComplexity: 30 } }, limits: { maxRelationFilters: 2 } })
)

/**
 * An `authorize` rule whose none or every is missing a value (no header: `{ subTasksNone: { title: { eq:
 * undefined } } }`) grants nothing; read as "a condition no sub-task meets" it would grant every record.
 */
const guardedTodoItems = defineResource({
  ...todoItemResource,
  authorize(context) {
    const title = context.params.headers?.['x-title'] as string | undefined
    const quantifier = context.params.headers?.['x-quantifier']
    if (quantifier === 'field') return { title: { eq: title } }
    return { [quantifier === 'every' ? 'subTasksEvery' : 'subTasksNone']: { title: { eq: title } } }
  }
})

forEachDatabase(
  'Relation filters none and every in authorize rules',
  (env) => {
    before(async function () {
      this.timeout(60000)
      // The same rows; the example's sub-tasks have no soft delete nor authorize, so every one counts here.
      for (const table of ['sub_tasks', 'tags', 'todo_item_tags']) {
        await env.server.db.schema.alterTable(table, (builder) => builder.datetime('deletedAt').nullable())
      }
      await seed(env.server.db)
    })

    // Through the service as the REST transport calls it: authorize reads the request's headers.
    const titlesFor = async (headers: Record<string, string>) => {
      const items = await (env.server.app.service('todo-items') as any).find({
        query: { $sort: { title: 1 } },
        provider: 'rest',
        headers,
        // A signed-in user: an incomplete rule is then read strictly rather than refused as anonymous.
        user: { id: 'ann' },
        paginate: false
      })
      return items.map((item: any) => item.title)
    }

    it('a missing value under none or every grants no record; a present one is applied', async () => {
      assert.deepEqual(await titlesFor({}), [])
      assert.deepEqual(await titlesFor({ 'x-quantifier': 'every' }), [])
      const live = CHILDREN
      const titled = (parent: string) => (child: Child) => child.parent === parent && child.title === 'd1'
      assert.deepEqual(
        await titlesFor({ 'x-title': 'd1' }),
        PARENTS.filter((parent) => !live.some(titled(parent)))
      )
      assert.deepEqual(
        await titlesFor({ 'x-title': 'd1', 'x-quantifier': 'every' }),
        PARENTS.filter((parent) =>
          live.filter((child) => child.parent === parent).every((child) => child.title === 'd1')
        )
      )
    })

    it("events: a rule with none or every admits no connection (the record alone cannot answer it), as R's", async () => {
      const service = env.server.app.service('todo-items')
      // The parent without sub-tasks: in the database it has none titled d1, and all of its (none) are.
      const record = await env.server.db('todo_items').where({ title: 'empty' }).first()
      const connection = (headers: Record<string, string>) => ({ headers, user: { id: 'ann' } })
      const connections = [
        connection({ 'x-title': 'd1' }),
        connection({ 'x-title': 'd1', 'x-quantifier': 'every' }),
        connection({ 'x-title': 'empty', 'x-quantifier': 'field' })
      ]
      const publish = authorizedPublisher(() => new Channel(connections))
      const channels = await publish(record, { service, method: 'create', result: record } as any)
      const admitted = [channels].flat().flatMap((channel: any) => channel.connections)
      assert.deepEqual(admitted, [connections[2]])
    })
  },
  exampleResourcesApp({
    resources: exampleResources.map((resource) =>
      resource.name === 'TodoItem' ? guardedTodoItems : resource
    )
  })
)
