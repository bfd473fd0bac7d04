import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import socketioClient from '@feathersjs/socketio-client'
import { io } from 'socket.io-client'
import { forEachDatabase } from './support/server'
import { clearTables, seedLinks, seedTags, seedTodoItems } from './support/seed'
import { codes, cursor, graphql } from './support/graphql'
import { QUERY_SYNTAX_HEADER } from '../src'

const tagName = (index: number) => `tag-${String(index).padStart(2, '0')}`
const itemTitle = (index: number) => `item-${String(index).padStart(2, '0')}`

/** Item i is linked to tags 0..i (at most 12): every page size and window differs per parent. */
const tagIndexesOf = (item: number) => Array.from({ length: Math.min(item + 1, 12) }, (_, tag) => tag)

forEachDatabase('Many-to-many: TodoItem.tags and Tag.todoItems through TodoItemTag', (env) => {
  let items: number[]
  let tags: number[]

  const linksOf = async (todoItemId: number) =>
    (await env.server.db('todo_item_tags').where({ todoItemId }).orderBy('tagId')).map((row) =>
      Number(row.tagId)
    )

  before(async function () {
    this.timeout(60000)
    const { db } = env.server
    await clearTables(db)
    items = await seedTodoItems(
      db,
      Array.from({ length: 30 }, (_, index) => ({ title: itemTitle(index), completed: index % 2 === 1 }))
    )
    tags = await seedTags(
      db,
      Array.from({ length: 13 }, (_, index) => tagName(index))
    )
    await seedLinks(
      db,
      items.flatMap((item, index) => tagIndexesOf(index).map((tag) => [item, tags[tag]] as [number, number]))
    )
  })

  const PAGE_QUERY = `query ($first: Int!) {
    todoItems(paging: { first: $first }, sorting: [{ field: title, direction: ASC }]) {
      edges { node { title
        tags(paging: { first: 5 }, sorting: [{ field: name, direction: ASC }]) {
          totalCount
          pageInfo { hasNextPage hasPreviousPage }
          edges { node { name todoItems(paging: { first: 2 }) { totalCount edges { node { title } } } } }
        }
      } }
    }
  }`

  it("loads each parent's own page of related records, both ways, in 3 statements whatever the page size", async () => {
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(env.server, PAGE_QUERY, { first: 30 })
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements.length, 3, statements.join('\n'))
    const nodes = response.data.todoItems.edges.map((edge: any) => edge.node)
    assert.equal(nodes.length, 30)
    for (const [index, node] of nodes.entries()) {
      const expected = tagIndexesOf(index).map(tagName)
      assert.deepEqual(
        node.tags.edges.map((edge: any) => edge.node.name),
        expected.slice(0, 5)
      )
      assert.equal(node.tags.totalCount, expected.length)
      assert.deepEqual(node.tags.pageInfo, { hasNextPage: expected.length > 5, hasPreviousPage: false })
      for (const edge of node.tags.edges) {
        const tag = Number(edge.node.name.slice(4))
        // Tag t is linked to items t..29.
        assert.equal(edge.node.todoItems.totalCount, 30 - tag)
        assert.deepEqual(
          edge.node.todoItems.edges.map((item: any) => item.node.title),
          [itemTitle(tag), itemTitle(tag + 1)]
        )
      }
    }
    const small = await env.server.countStatements(() => graphql(env.server, PAGE_QUERY, { first: 2 }))
    assert.equal(small, 3)
  })

  it("pages each parent's related records with cursors and filters them", async () => {
    const response = await graphql(
      env.server,
      `{ todoItems(filter: { title: { in: ["${itemTitle(11)}", "${itemTitle(3)}"] } }, sorting: [{ field: title, direction: ASC }]) {
          edges { node { title
            tags(paging: { first: 3, after: "${cursor(2)}" }, filter: { name: { neq: "${tagName(4)}" } }, sorting: [{ field: name, direction: DESC }]) {
              totalCount pageInfo { hasNextPage hasPreviousPage } edges { node { name } }
            }
          } }
        } }`
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const [three, eleven] = response.data.todoItems.edges.map((edge: any) => edge.node.tags)
    assert.deepEqual(
      three.edges.map((edge: any) => edge.node.name),
      [tagName(0)]
    )
    assert.deepEqual(
      [three.totalCount, three.pageInfo.hasNextPage, three.pageInfo.hasPreviousPage],
      [4, false, true]
    )
    assert.deepEqual(
      eleven.edges.map((edge: any) => edge.node.name),
      [tagName(8), tagName(7), tagName(6)]
    )
    assert.deepEqual([eleven.totalCount, eleven.pageInfo.hasNextPage], [11, true])
  })

  it("buckets each parent's related records by day through the link, named as on the root", async () => {
    // The link's statement is built for each call, not compiled once: the day reaches the decoder as a date
    // on this path too (see DateBuckets.startIsDate).
    const response = await graphql(
      env.server,
      `
        {
          todoItems(paging: { first: 30 }) {
            edges {
              node {
                created
              }
            }
          }
          tags(paging: { first: 1 }, sorting: [{ field: name, direction: ASC }]) {
            edges {
              node {
                name
                todoItemsAggregate {
                  groupBy {
                    created(by: DAY)
                  }
                  count {
                    id
                  }
                }
              }
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    // Tag 0 is linked to all 30 items.
    const perDay = new Map<string, number>()
    for (const edge of response.data.todoItems.edges) {
      const day = `${edge.node.created.slice(0, 10)}T00:00:00.000Z`
      perDay.set(day, (perDay.get(day) ?? 0) + 1)
    }
    const [tag] = response.data.tags.edges
    assert.equal(tag.node.name, tagName(0))
    assert.deepEqual(
      tag.node.todoItemsAggregate,
      [...perDay]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([created, id]) => ({ groupBy: { created }, count: { id } }))
    )
  })

  it("aggregates each parent's related records, both ways, in one statement per relation", async () => {
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(
        env.server,
        `{
          todoItems(paging: { first: 4 }, sorting: [{ field: title, direction: ASC }]) {
            edges { node { title tagsAggregate(filter: { name: { neq: "${tagName(0)}" } }) { count { id } max { name } } } }
          }
          tags(paging: { first: 2 }, sorting: [{ field: name, direction: ASC }]) {
            edges { node { name todoItemsAggregate { groupBy { completed } count { id } } } }
          }
        }`
      )
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements.length, 4, statements.join('\n'))
    assert.deepEqual(
      response.data.todoItems.edges.map((edge: any) => edge.node.tagsAggregate),
      [
        [{ count: { id: 0 }, max: { name: null } }],
        [{ count: { id: 1 }, max: { name: tagName(1) } }],
        [{ count: { id: 2 }, max: { name: tagName(2) } }],
        [{ count: { id: 3 }, max: { name: tagName(3) } }]
      ]
    )
    // Tag 0 is linked to all 30 items (15 open, 15 completed), tag 1 to items 1..29.
    assert.deepEqual(
      response.data.tags.edges.map((edge: any) => edge.node.todoItemsAggregate),
      [
        [
          { groupBy: { completed: false }, count: { id: 15 } },
          { groupBy: { completed: true }, count: { id: 15 } }
        ],
        [
          { groupBy: { completed: false }, count: { id: 14 } },
          { groupBy: { completed: true }, count: { id: 15 } }
        ]
      ]
    )
  })

  it('addTagsToTodoItem, setTagsOnTodoItem and removeTagsFromTodoItem link through the join resource, with its events', async () => {
    const item = items[0] // linked to tag 0 only
    const events: Array<[string, number]> = []
    const links = env.server.app.service('todo-item-tags')
    const created = (link: any) => events.push(['created', link.tagId])
    const removed = (link: any) => events.push(['removed', link.tagId])
    links.on('created', created)
    links.on('removed', removed)
    try {
      const mutate = async (mutation: string, ids: number[]) => {
        const response = await graphql(
          env.server,
          `mutation { ${mutation}(input: { id: ${item}, relationIds: [${ids.join(', ')}] }) {
              id tags(paging: { first: 20 }, sorting: [{ field: name, direction: ASC }]) { edges { node { name } } } } }`
        )
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        return response.data[mutation].tags.edges.map((edge: any) => edge.node.name)
      }
      // Adding a linked tag again changes nothing.
      assert.deepEqual(await mutate('addTagsToTodoItem', [tags[0], tags[5], tags[6], tags[5]]), [
        tagName(0),
        tagName(5),
        tagName(6)
      ])
      assert.deepEqual(await linksOf(item), [tags[0], tags[5], tags[6]])
      assert.deepEqual(await mutate('setTagsOnTodoItem', [tags[6], tags[7]]), [tagName(6), tagName(7)])
      assert.deepEqual(await mutate('removeTagsFromTodoItem', [tags[6], tags[12]]), [tagName(7)])
      assert.deepEqual(await linksOf(item), [tags[7]])
      assert.deepEqual(events, [
        ['created', tags[5]],
        ['created', tags[6]],
        ['removed', tags[0]],
        ['removed', tags[5]],
        ['created', tags[7]],
        ['removed', tags[6]]
      ])

      // A tag that does not exist is NOT_FOUND, and nothing changes.
      const missing = await graphql(
        env.server,
        `mutation { addTagsToTodoItem(input: { id: ${item}, relationIds: [${tags[1]}, 999999] }) { id } }`
      )
      assert.deepEqual(codes(missing), ['NOT_FOUND'])
      assert.deepEqual(await linksOf(item), [tags[7]])
      const parentMissing = await graphql(
        env.server,
        `mutation { addTagsToTodoItem(input: { id: 999999, relationIds: [${tags[1]}] }) { id } }`
      )
      assert.deepEqual(codes(parentMissing), ['NOT_FOUND'])

      // And from the other side.
      const fromTag = await graphql(
        env.server,
        `mutation { addTodoItemsToTag(input: { id: ${tags[12]}, relationIds: [${item}] }) { name todoItems { edges { node { id } } } } }`
      )
      assert.equal(fromTag.errors, undefined, JSON.stringify(fromTag.errors))
      assert.deepEqual(fromTag.data.addTodoItemsToTag.todoItems.edges, [{ node: { id: String(item) } }])
      assert.deepEqual(await linksOf(item), [tags[7], tags[12]])
    } finally {
      links.removeListener('created', created)
      links.removeListener('removed', removed)
    }
  })

  it('refuses relationIds that only JavaScript reads as integers, linking nothing', async () => {
    const item = items[2]
    const before = await linksOf(item)
    // Number() reads each of these as an existing tag's id; the integer key takes decimal digits only.
    for (const id of [`0x${tags[12].toString(16)}`, ` ${tags[11]}`, `+${tags[10]}`, `${tags[9]}.0`, '']) {
      const response = await graphql(
        env.server,
        `mutation { addTagsToTodoItem(input: { id: ${item}, relationIds: [${JSON.stringify(id)}] }) { id } }`
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'], JSON.stringify(id))
    }
    assert.deepEqual(await linksOf(item), before)
  })

  it('links over REST: POST and DELETE /todo-item-tags, with socket.io events; duplicates and unknown ids refused', async () => {
    const item = items[1]
    const before = await linksOf(item)
    const socket = io(env.server.baseUrl, { transports: ['websocket'], forceNew: true, reconnection: false })
    const client = feathers().configure(socketioClient(socket))
    const heard: string[] = []
    client.service('todo-item-tags').on('created', (link: any) => heard.push(`created ${link.tagId}`))
    client.service('todo-item-tags').on('removed', (link: any) => heard.push(`removed ${link.tagId}`))
    try {
      await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
      const created = await env.server.http('POST', '/todo-item-tags', { todoItemId: item, tagId: tags[9] })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual(created.body, { id: created.body.id, todoItemId: item, tagId: tags[9] })
      assert.deepEqual(await linksOf(item), [...before, tags[9]])

      const again = await env.server.http('POST', '/todo-item-tags', { todoItemId: item, tagId: tags[9] })
      assert.equal(again.status, 409)
      const unknown = await env.server.http('POST', '/todo-item-tags', { todoItemId: item, tagId: 999999 })
      assert.equal(unknown.status, 400)
      assert.equal(unknown.body.errors[0].field, 'body.tagId')

      const removed = await env.server.http('DELETE', `/todo-item-tags/${created.body.id}`)
      assert.equal(removed.status, 200)
      assert.equal(removed.body.tagId, tags[9])
      // Unlinking by the pair, in Feathers' syntax (multi remove).
      const byPair = await env.server.http(
        'DELETE',
        `/todo-item-tags?todoItemId=${item}&tagId=${tags[1]}`,
        undefined,
        {
          [QUERY_SYNTAX_HEADER]: 'feathers'
        }
      )
      assert.equal(byPair.status, 200, byPair.text)
      assert.deepEqual(
        byPair.body.map((link: any) => link.tagId),
        [tags[1]]
      )
      assert.deepEqual(
        await linksOf(item),
        before.filter((tag) => tag !== tags[1])
      )
      const deadline = Date.now() + 5000
      while (heard.length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepEqual(heard, [`created ${tags[9]}`, `removed ${tags[9]}`, `removed ${tags[1]}`])
    } finally {
      socket.close()
    }
  })

  it('deleting a todo item or a tag deletes its links', async () => {
    const item = items[29]
    assert.equal((await linksOf(item)).length, 12)
    const response = await env.server.http('DELETE', `/todo-items/${item}`)
    assert.equal(response.status, 200)
    assert.deepEqual(await linksOf(item), [])
    const tag = tags[11]
    assert.ok((await env.server.db('todo_item_tags').where({ tagId: tag })).length > 0)
    assert.equal((await env.server.http('DELETE', `/tags/${tag}`)).status, 200)
    assert.deepEqual(await env.server.db('todo_item_tags').where({ tagId: tag }), [])
  })
})
