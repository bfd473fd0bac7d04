import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'

const HINT = /USE INDEX FOR GROUP BY \(\)/

/**
 * The example's todo_items has an index on `completed` alone. MariaDB groups by reading it in order, which
 * for a column it lacks fetches every row in turn (issue 22: 3.6× slower than a table scan); the plugin tells
 * it to leave the index out of the grouping then, and only then.
 */
forEachDatabase('Aggregates: the grouping plan', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(
      env.server.db,
      Array.from({ length: 40 }, (_, index) => ({
        title: `item ${index}`,
        completed: index % 3 === 0,
        priority: index % 7,
        created: new Date(Date.UTC(2026, 0, 1 + (index % 4), index)).toISOString()
      }))
    )
  })

  async function aggregate(document: string) {
    let answer: unknown
    const statements = await env.server.recordStatements(async () => {
      const response = await graphql(env.server, document)
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      answer = response.data.todoItemAggregate
    })
    return { answer, aggregates: statements.filter((sql) => /group by/i.test(sql)) }
  }

  it('answers as a plain GROUP BY does, hinting MariaDB away from an index that lacks an averaged column', async () => {
    const { answer, aggregates } = await aggregate(
      '{ todoItemAggregate { groupBy { completed } count { id } avg { priority } } }'
    )
    const rows: Array<Record<string, unknown>> = await env.server
      .db('todo_items')
      .select('completed')
      .count({ count: 'id' })
      .avg({ avg: 'priority' })
      .groupBy('completed')
      .orderBy('completed')
    assert.deepEqual(
      answer,
      rows.map((row) => ({
        groupBy: { completed: Boolean(row.completed) },
        count: { id: Number(row.count) },
        avg: { priority: Number(row.avg) }
      }))
    )
    assert.equal(aggregates.length, 1, aggregates.join('\n'))
    assert.equal(HINT.test(aggregates[0]), env.server.database === 'mysql', aggregates[0])
  })

  it('leaves the optimizer its choice where the index holds every column read, or the group is a date bucket', async () => {
    for (const document of [
      // InnoDB's secondary indexes hold the primary key: counting ids reads nothing the index lacks.
      '{ todoItemAggregate { groupBy { completed } count { id } } }',
      '{ todoItemAggregate { groupBy { created(by: DAY) } count { id } avg { priority } } }'
    ]) {
      const { aggregates } = await aggregate(document)
      assert.equal(aggregates.length, 1, aggregates.join('\n'))
      assert.doesNotMatch(aggregates[0], HINT, document)
    }
  })
})
