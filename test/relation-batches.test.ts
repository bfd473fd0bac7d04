import assert from 'node:assert/strict'
import { defineResource } from '../src'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'
import { exampleResourcesApp } from './support/example-resources-app'
import { graphql } from './support/graphql'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { forEachDatabase } from './support/server'

/** The example's TodoItem with pages of up to 600 records, so that one page holds more parents than 500. */
const largePages = defineResource({
  ...todoItemResource,
  query: { ...todoItemResource.query, maxResultsSize: 600 }
})

const PARENTS = 520

forEachDatabase(
  'Relations load in batches of 500 parents',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      const parents = await seedTodoItems(
        env.server.db,
        Array.from({ length: PARENTS }, (_, index) => ({ title: `parent ${index}` }))
      )
      await seedSubTasks(
        env.server.db,
        parents.map((todoItemId, index) => ({ todoItemId, title: `child ${index}` }))
      )
    })

    it(`reads the children of ${PARENTS} parents in two statements, as the README promises (one per 500)`, async () => {
      let answer: any
      const statements = await env.server.recordStatements(async () => {
        answer = await graphql(
          env.server,
          `{ todoItems(paging: { first: ${PARENTS} }) { edges { node { id subTasks { edges { node { title } } } } } } }`
        )
      })
      assert.equal(answer.errors, undefined, JSON.stringify(answer.errors))
      const edges = answer.data.todoItems.edges
      assert.equal(edges.length, PARENTS)
      assert.ok(edges.every((edge: any) => edge.node.subTasks.edges.length === 1))
      const children = statements.filter((sql) => /from ["`]?sub_tasks/i.test(sql))
      // 520 parents: one batch of 500 and one of 20; a smaller batch would take more.
      assert.equal(children.length, 2, children.join('\n'))
    })
  },
  exampleResourcesApp({
    resources: exampleResources.map((resource) => (resource.name === 'TodoItem' ? largePages : resource)),
    graphql: { limits: { maxComplexity: 100_000 } }
  })
)
