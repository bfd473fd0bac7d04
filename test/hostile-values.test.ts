import assert from 'node:assert/strict'
import { graphql } from './support/graphql'
import { HOSTILE_STRINGS, STAND_IN_INTEGERS } from './support/hostile-corpus'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'

/**
 * What the example's schema stores: a title of 1 to 100 characters, a description of at most 1,000, neither
 * with a NUL character (PostgreSQL cannot store one, so every database refuses it: edge-cases.test.ts).
 */
const storable = HOSTILE_STRINGS.filter((value) => !value.includes('\u0000'))
const titles = storable.filter((value) => value.length >= 1 && value.length <= 100)
const descriptions = storable.filter((value) => value.length <= 1000)

const byTitle = `query($value: String!) {
  todoItems(filter: {title: {eq: $value}}, paging: {first: 50}) { edges { node { id } } }
}`
const byDescription = `query($value: String!) {
  todoItems(filter: {description: {eq: $value}}, paging: {first: 50}) { edges { node { id } } }
}`

/**
 * The hostile corpus (hostile-input.test.ts) checks that nothing breaks; this checks that hostile values mean
 * exactly themselves: written through the API they read back unchanged, and an equality filter on one finds
 * exactly the records holding it, no more (a filter that escaped its value would find extra rows with a 200).
 */
forEachDatabase('Hostile values: stored and matched exactly', (env) => {
  /** The records the API created, by id, as the test wrote them. */
  const written = new Map<number, { title: string; description: string | null }>()

  before(async () => {
    await clearTables(env.server.db)
    // Ordinary neighbours, which no hostile filter may match.
    await seedTodoItems(env.server.db, [{ title: 'Item 0', description: 'd' }, { title: 'Item 1' }])
  })

  it('creates and patches records holding each hostile string, and reads them back unchanged', async function () {
    this.timeout(60000)
    for (const [index, title] of titles.entries()) {
      const description = descriptions[index % descriptions.length]
      const created = await env.server.http('POST', '/todo-items', { title, description })
      assert.equal(created.status, 201, `create ${JSON.stringify(title)}: ${created.text}`)
      written.set(created.body.id, { title, description })
    }
    // Each description that was not written by a create is written by a patch.
    const ids = [...written.keys()]
    for (const [index, description] of descriptions.entries()) {
      if (index < titles.length) continue
      const id = ids[index % ids.length]
      const patched = await env.server.http('PATCH', `/todo-items/${id}`, { description })
      assert.equal(patched.status, 200, `patch ${JSON.stringify(description.slice(0, 40))}: ${patched.text}`)
      written.get(id)!.description = description
    }
    for (const [id, expected] of written) {
      const rest = await env.server.http('GET', `/todo-items/${id}`)
      assert.deepEqual({ title: rest.body.title, description: rest.body.description }, expected, `REST ${id}`)
      const answer = await graphql(
        env.server,
        'query($id: ID!) { todoItem(id: $id) { title description } }',
        {
          id: String(id)
        }
      )
      assert.deepEqual(answer.data?.todoItem, expected, `GraphQL ${id}`)
    }
  })

  it('finds exactly the records holding a hostile string, over REST and GraphQL', async function () {
    this.timeout(60000)
    assert.ok(written.size > 0, 'the previous test wrote the records')
    const holding = (field: 'title' | 'description', value: string) =>
      [...written].filter(([, record]) => record[field] === value).map(([id]) => id)
    for (const field of ['title', 'description'] as const) {
      for (const value of field === 'title' ? titles : descriptions) {
        const expected = holding(field, value)
        const label = `${field} = ${JSON.stringify(value.slice(0, 60))}`
        const rest = await env.server.http(
          'GET',
          `/todo-items?${field}=${encodeURIComponent(value)}&limit=50`
        )
        assert.equal(rest.status, 200, `REST ${label}: ${rest.text.slice(0, 200)}`)
        assert.deepEqual(
          rest.body.nodes.map((record: { id: number }) => record.id),
          expected,
          `REST ${label}`
        )
        const answer = await graphql(env.server, field === 'title' ? byTitle : byDescription, { value })
        assert.deepEqual(answer.errors, undefined, `GraphQL ${label}`)
        const found = answer.data.todoItems.edges.map((edge: { node: { id: string } }) =>
          Number(edge.node.id)
        )
        assert.deepEqual(found, expected, `GraphQL ${label}`)
      }
    }
  })

  it("answers the compiler's integer stand-ins as the numbers they are", async () => {
    const total = 2 + written.size
    for (const value of STAND_IN_INTEGERS) {
      const priority = await env.server.http('GET', `/todo-items?priority=${value}`)
      assert.deepEqual([priority.status, priority.body.nodes], [200, []], `priority = ${value}`)
      const offset = await env.server.http('GET', `/todo-items?offset=${value}&limit=5`)
      assert.deepEqual(
        [offset.status, offset.body.totalCount, offset.body.nodes],
        [200, total, []],
        `offset ${value}`
      )
      const byId = await env.server.http('GET', `/todo-items/${value}`)
      assert.equal(byId.status, 404, `id ${value}`)
    }
  })
})
