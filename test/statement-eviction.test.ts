import assert from 'node:assert/strict'
import { graphql } from './support/graphql'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'

/**
 * At most 500 statement shapes are kept per resource (and, on SQLite, 500 prepared statements per
 * connection), oldest dropped first. Past that, evicted shapes are compiled again: running more shapes than
 * are kept, then the first ones again with other values, must answer every one exactly.
 */
const SHAPES = 600
const PRIORITIES = 7
const ITEMS = 60

const OPERATORS = {
  eq: (a: number, b: number) => a === b,
  neq: (a: number, b: number) => a !== b,
  gt: (a: number, b: number) => a > b,
  gte: (a: number, b: number) => a >= b,
  lt: (a: number, b: number) => a < b,
  lte: (a: number, b: number) => a <= b
}
type Operator = keyof typeof OPERATORS
const OPERATOR_NAMES = Object.keys(OPERATORS) as Operator[]

const QUERY = `query($f: TodoItemFilter) {
  todoItems(filter: $f, sorting: [{field: id, direction: ASC}], paging: {first: 50}) { totalCount edges { node { id } } }
}`

/**
 * Shape `shape`, with values chosen by `offset`: an id comparison and an `or` of 1 to 17 priority comparisons,
 * each with one of six operators, so that no two shapes share a SQL text.
 */
function filterOf(shape: number, offset: number) {
  const count = OPERATOR_NAMES.length
  const operator = OPERATOR_NAMES[shape % count]
  const idOperator = OPERATOR_NAMES[Math.floor(shape / count) % count]
  const length = 1 + Math.floor(shape / count / count)
  const values = Array.from({ length }, (_, index) => (shape + index + offset) % PRIORITIES)
  return { operator, idOperator, pivot: (shape + offset) % ITEMS, values }
}

forEachDatabase('Statement cache: more shapes than are kept', (env) => {
  const priorities: Array<{ id: number; priority: number }> = []

  before(async () => {
    await clearTables(env.server.db)
    const items = Array.from({ length: ITEMS }, (_, index) => ({
      title: `Item ${index}`,
      priority: (index * 3) % PRIORITIES
    }))
    const ids = await seedTodoItems(env.server.db, items)
    ids.forEach((id, index) => priorities.push({ id, priority: items[index].priority }))
  })

  async function assertExact(shape: number, offset: number) {
    const { operator, idOperator, pivot, values } = filterOf(shape, offset)
    const pivotId = priorities[pivot].id
    const matching = priorities
      .filter((item) => OPERATORS[idOperator](item.id, pivotId))
      .filter((item) => values.some((value) => OPERATORS[operator](item.priority, value)))
      .map((item) => String(item.id))
    const filter = {
      and: [
        { id: { [idOperator]: pivotId } },
        { or: values.map((value) => ({ priority: { [operator]: value } })) }
      ]
    }
    const answer = await graphql(env.server, QUERY, { f: filter })
    assert.equal(answer.errors, undefined, JSON.stringify(answer.errors))
    const found = answer.data.todoItems
    assert.deepEqual(
      {
        totalCount: found.totalCount,
        ids: found.edges.map((edge: { node: { id: string } }) => edge.node.id)
      },
      { totalCount: matching.length, ids: matching.slice(0, 50) },
      `shape ${shape} (id ${idOperator}, ${operator} of ${values.length}), values from ${offset}`
    )
  }

  it(`answers ${SHAPES} shapes exactly, then the first ones again after their eviction`, async function () {
    this.timeout(180000)
    for (let shape = 0; shape < SHAPES; shape++) await assertExact(shape, 0)
    for (let shape = 0; shape < 100; shape++) await assertExact(shape, 1)
  })
})
