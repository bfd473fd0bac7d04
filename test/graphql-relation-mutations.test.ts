import assert from 'node:assert/strict'
import { accessToken, bearer } from './support/auth-app'
import { codes, graphql } from './support/graphql'
import { mutationAppFactory } from './support/mutation-app'
import { forEachDatabase } from './support/server'

forEachDatabase(
  'GraphQL relation mutations, authorized on both sides',
  (env) => {
    let ann: Record<string, string>
    let bob: Record<string, string>
    const as = (user: Record<string, string>, query: string) => graphql(env.server, query, undefined, user)
    const notesOf = async (folderId: string) =>
      (
        await env.server
          .db('notes')
          .where({ folderId: Number(folderId) })
          .orderBy('id')
      ).map((row) => String(row.id))
    const create = async (user: Record<string, string>, mutation: string) => {
      const response = await as(user, `mutation { ${mutation} { id } }`)
      assert.deepEqual(response.errors, undefined)
      return Object.values(response.data as Record<string, { id: string }>)[0].id
    }
    let annFolder: string
    let annOther: string
    let bobFolder: string
    let annNotes: string[]
    let bobNote: string

    before(async () => {
      ann = bearer(await accessToken(env.server, 'ann'))
      bob = bearer(await accessToken(env.server, 'bob'))
      annFolder = await create(ann, 'createOneFolder(input: { folder: { name: "ann" } })')
      annOther = await create(ann, 'createOneFolder(input: { folder: { name: "ann other" } })')
      bobFolder = await create(bob, 'createOneFolder(input: { folder: { name: "bob" } })')
      annNotes = []
      for (const text of ['n1', 'n2', 'n3'])
        annNotes.push(await create(ann, `createOneNote(input: { note: { text: "${text}" } })`))
      bobNote = await create(bob, 'createOneNote(input: { note: { text: "bob" } })')
    })

    it('addNotesToFolder points the notes at the folder and answers the folder with them', async () => {
      const response = await as(
        ann,
        `mutation { addNotesToFolder(input: { id: ${annFolder}, relationIds: [${annNotes[0]}, ${annNotes[1]}] }) { id notes { edges { node { text } } } } }`
      )
      assert.deepEqual(response.errors, undefined)
      assert.deepEqual(
        response.data.addNotesToFolder.notes.edges.map((e: { node: { text: string } }) => e.node.text),
        ['n1', 'n2']
      )
      assert.deepEqual(await notesOf(annFolder), [annNotes[0], annNotes[1]])
      const rest = await env.server.http('GET', `/notes/${annNotes[0]}`, undefined, ann)
      assert.equal(rest.body.folderId, Number(annFolder))
    })

    it('a hidden child or parent is NOT_FOUND and no child changes', async () => {
      const withHiddenChild = await as(
        ann,
        `mutation { addNotesToFolder(input: { id: ${annOther}, relationIds: [${annNotes[2]}, ${bobNote}] }) { id } }`
      )
      assert.deepEqual(codes(withHiddenChild), ['NOT_FOUND'])
      assert.deepEqual(await notesOf(annOther), [], 'the visible note was not moved either')
      const hiddenParent = await as(
        ann,
        `mutation { addNotesToFolder(input: { id: ${bobFolder}, relationIds: [${annNotes[2]}] }) { id } }`
      )
      assert.deepEqual(codes(hiddenParent), ['NOT_FOUND'])
      const setHiddenParent = await as(
        ann,
        `mutation { setFolderOnNote(input: { id: ${annNotes[2]}, relationId: ${bobFolder} }) { id } }`
      )
      assert.deepEqual(codes(setHiddenParent), ['NOT_FOUND'])
      const setOnHiddenChild = await as(
        ann,
        `mutation { setFolderOnNote(input: { id: ${bobNote}, relationId: ${annFolder} }) { id } }`
      )
      assert.deepEqual(codes(setOnHiddenChild), ['NOT_FOUND'])
      assert.equal(
        (
          await env.server
            .db('notes')
            .where({ id: Number(annNotes[2]) })
            .first()
        ).folderId,
        null
      )
      assert.equal(
        (
          await env.server
            .db('notes')
            .where({ id: Number(bobNote) })
            .first()
        ).folderId,
        null
      )
    })

    it('setFolderOnNote and removeFolderFromNote set and clear the one-relation', async () => {
      const set = await as(
        ann,
        `mutation { setFolderOnNote(input: { id: ${annNotes[2]}, relationId: ${annOther} }) { id folder { name } } }`
      )
      assert.deepEqual(set.data.setFolderOnNote, { id: annNotes[2], folder: { name: 'ann other' } })
      const wrong = await as(
        ann,
        `mutation { removeFolderFromNote(input: { id: ${annNotes[2]}, relationId: ${annFolder} }) { id } }`
      )
      assert.deepEqual(codes(wrong), ['NOT_FOUND'], 'the note is not in that folder')
      const removed = await as(
        ann,
        `mutation { removeFolderFromNote(input: { id: ${annNotes[2]}, relationId: ${annOther} }) { id folder { name } } }`
      )
      assert.deepEqual(removed.data.removeFolderFromNote, { id: annNotes[2], folder: null })
    })

    it('setNotesOnFolder replaces the children; removeNotesFromFolder clears the named ones', async () => {
      const set = await as(
        ann,
        `mutation { setNotesOnFolder(input: { id: ${annFolder}, relationIds: [${annNotes[1]}, ${annNotes[2]}] }) { id } }`
      )
      assert.deepEqual(set.errors, undefined)
      assert.deepEqual(await notesOf(annFolder), [annNotes[1], annNotes[2]])
      const removed = await as(
        ann,
        `mutation { removeNotesFromFolder(input: { id: ${annFolder}, relationIds: [${annNotes[1]}] }) { notes { edges { node { text } } } } }`
      )
      assert.deepEqual(removed.data.removeNotesFromFolder.notes.edges, [{ node: { text: 'n3' } }])
      assert.deepEqual(await notesOf(annFolder), [annNotes[2]])
    })
  },
  mutationAppFactory()
)

forEachDatabase('GraphQL relation mutations that could never succeed are not generated', (env) => {
  const mutations = async () => {
    const response = await graphql(env.server, '{ __schema { mutationType { fields { name } } } }')
    return (response.data.__schema.mutationType.fields as Array<{ name: string }>).map((field) => field.name)
  }

  it('a required foreign key (SubTask.todoItemId) is set and added, never cleared', async () => {
    const names = await mutations()
    for (const kept of ['setTodoItemOnSubTask', 'addSubTasksToTodoItem'])
      assert.ok(names.includes(kept), kept)
    for (const left of ['removeTodoItemFromSubTask', 'setSubTasksOnTodoItem', 'removeSubTasksFromTodoItem']) {
      assert.ok(!names.includes(left), left)
    }
    const many = names.filter((name) => /Tags(To|On|From)TodoItem$/.test(name))
    assert.deepEqual(many.sort(), ['addTagsToTodoItem', 'removeTagsFromTodoItem', 'setTagsOnTodoItem'])
  })

  it('addSubTasksToTodoItem moves a sub task from its parent to another', async () => {
    const created = await graphql(
      env.server,
      `
        mutation {
          a: createOneTodoItem(input: { todoItem: { title: "a" } }) {
            id
          }
          b: createOneTodoItem(input: { todoItem: { title: "b" } }) {
            id
          }
        }
      `
    )
    const { a, b } = created.data as Record<string, { id: string }>
    const child = await env.server.http('POST', '/sub-tasks', { title: 'child', todoItemId: a.id })
    assert.equal(child.status, 201, child.text)
    const moved = await graphql(
      env.server,
      `mutation { addSubTasksToTodoItem(input: { id: ${b.id}, relationIds: [${child.body.id}] }) { subTasks { edges { node { title } } } } }`
    )
    assert.deepEqual(moved.errors, undefined)
    assert.deepEqual(moved.data.addSubTasksToTodoItem.subTasks.edges, [{ node: { title: 'child' } }])
  })
})
