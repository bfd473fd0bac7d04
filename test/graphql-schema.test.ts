import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { buildClientSchema, getIntrospectionQuery, printSchema } from 'graphql'
import { forEachDatabase } from './support/server'
import { compactSdl } from './support/graphql'
import { feathersQueryState } from '../src'

/**
 * The example application's SDL is held in a snapshot. After an intended schema change, update it with
 * `npm run schema > test/__snapshots__/schema.graphql` (or `UPDATE_SNAPSHOT=1 npx mocha test/graphql-schema.test.ts`)
 * and review the diff.
 */
const SNAPSHOT = resolve(__dirname, '__snapshots__/schema.graphql')

forEachDatabase('GraphQL schema', (env) => {
  it('matches the snapshot, both as built and as introspected over HTTP', async () => {
    const schema = feathersQueryState(env.server.app)!.graphqlSchema!
    const printed = printSchema(schema) + '\n'
    if (process.env.UPDATE_SNAPSHOT) writeFileSync(SNAPSHOT, printed)
    assert.ok(existsSync(SNAPSHOT), `missing ${SNAPSHOT}`)
    assert.equal(printed, readFileSync(SNAPSHOT, 'utf8'))

    const response = await env.server.http('POST', '/graphql', { query: getIntrospectionQuery() })
    assert.equal(response.status, 200)
    assert.equal(printSchema(buildClientSchema(response.body.data)) + '\n', printed)
  })

  it('has the names, arguments and defaults of the specification', () => {
    const sdl = printSchema(feathersQueryState(env.server.app)!.graphqlSchema!).replace(/\s*"""[^]*?"""/g, '')
    const compact = compactSdl(env.server)
    for (const expected of [
      'todoItem( id: ID! ): TodoItem',
      'todoItems( paging: CursorPaging = {first: 10} filter: TodoItemFilter = {} sorting: [TodoItemSort!] = [] ): TodoItemConnection!',
      'subTasks( paging: CursorPaging = {first: 10} filter: SubTaskFilter = {} sorting: [SubTaskSort!] = [] ): TodoItemSubTasksConnection!',
      'type TodoItem { id: ID! title: String! description: String completed: Boolean! created: DateTime! updated: DateTime! age: Float! priority: Float! subTasksCount: Int! subTasks(',
      'todoItemId: String! todoItem: TodoItem }',
      'tags( paging: CursorPaging = {first: 10} filter: TagFilter = {} sorting: [TagSort!] = [] ): TodoItemTagsConnection!',
      'type Tag { id: ID! name: String! created: DateTime! updated: DateTime! todoItems(',
      'type TodoItemConnection { pageInfo: PageInfo! edges: [TodoItemEdge!]! totalCount: Int! aggregate( having: TodoItemAggregateHaving sorting: [TodoItemAggregateSort!] paging: AggregatePaging ): [TodoItemAggregateResponse!]! }',
      'type TodoItemSubTasksConnection { pageInfo: PageInfo! edges: [SubTaskEdge!]! totalCount: Int! aggregate( having: SubTaskAggregateHaving sorting: [SubTaskAggregateSort!] paging: AggregatePaging ): [TodoItemSubTasksAggregateResponse!]! }',
      'type TodoItemEdge { node: TodoItem! cursor: ConnectionCursor! }',
      'type PageInfo { hasNextPage: Boolean hasPreviousPage: Boolean startCursor: ConnectionCursor endCursor: ConnectionCursor }',
      'input CursorPaging { before: ConnectionCursor after: ConnectionCursor first: Int last: Int }',
      'input TodoItemFilter { and: [TodoItemFilter!] or: [TodoItemFilter!] id: IDFilterComparison title: StringFieldComparison description: StringFieldComparison completed: BooleanFieldComparison created: DateFieldComparison updated: DateFieldComparison priority: NumberFieldComparison subTasksCount: IntFieldComparison subTasks: SubTaskFilter subTasksNone: SubTaskFilter subTasksEvery: SubTaskFilter tags: TagFilter tagsNone: TagFilter tagsEvery: TagFilter }',
      'input BooleanFieldComparison { is: Boolean isNot: Boolean }',
      'input NumberFieldComparisonBetween { lower: Float! upper: Float! }',
      'input DateFieldComparisonBetween { lower: DateTime! upper: DateTime! }',
      // The specification's members, `field` optional since a sort entry may name a `path` instead (issue 42).
      'input TodoItemSort { field: TodoItemSortFields direction: SortDirection! nulls: SortNulls path: String aggregate: SortAggregate }',
      'enum TodoItemSortFields { id title description completed created updated priority subTasksCount }',
      'enum SortDirection { ASC DESC }',
      'enum SortNulls { NULLS_FIRST NULLS_LAST }',
      'scalar ConnectionCursor',
      'scalar DateTime'
    ]) {
      assert.ok(compact.includes(expected), `SDL lacks: ${expected}`)
    }
    // nestjs-query's mutations and subscriptions (the example enables multi only for removing links).
    for (const expected of [
      'createOneTodoItem(input: CreateOneTodoItemInput!): TodoItem!',
      'updateOneTodoItem(input: UpdateOneTodoItemInput!): TodoItem!',
      'deleteOneTodoItem(input: DeleteOneTodoItemInput!): TodoItemDeleteResponse!',
      'addSubTasksToTodoItem(input: AddSubTasksToTodoItemInput!): TodoItem!',
      'addTagsToTodoItem(input: AddTagsToTodoItemInput!): TodoItem!',
      'setTagsOnTodoItem(input: SetTagsOnTodoItemInput!): TodoItem!',
      'removeTagsFromTodoItem(input: RemoveTagsFromTodoItemInput!): TodoItem!',
      'addTodoItemsToTag(input: AddTodoItemsToTagInput!): Tag!',
      'setTodoItemOnSubTask(input: SetTodoItemOnSubTaskInput!): SubTask!',
      'input CreateTodoItem { title: String! description: String completed: Boolean priority: Float }',
      'createdTodoItem(input: CreateTodoItemSubscriptionFilterInput): TodoItem!',
      'deletedOneSubTask(input: DeleteOneSubTaskSubscriptionFilterInput): SubTaskDeleteResponse!'
    ]) {
      assert.ok(compact.includes(expected), `SDL lacks: ${expected}`)
    }
    assert.doesNotMatch(
      sdl.replace(/(type \w+AggregateGroupBy|enum \w+AggregateSortFields) \{[^}]*\}/g, ''),
      /createdBy|updatedBy/,
      'hidden audit columns are aggregate group keys (which groups may be sorted by) only'
    )
    assert.match(
      compact,
      /input DateFieldComparison \{ is: Boolean isNot: Boolean eq: DateTime neq: DateTime gt: DateTime gte: DateTime lt: DateTime lte: DateTime in: \[DateTime!\] notIn: \[DateTime!\] between: DateFieldComparisonBetween notBetween: DateFieldComparisonBetween \}/
    )
    assert.match(
      compact,
      /input StringFieldComparison \{ is: Boolean isNot: Boolean eq: String neq: String gt: String gte: String lt: String lte: String like: String notLike: String iLike: String notILike: String in: \[String!\] notIn: \[String!\] \}/
    )
  })
})
