import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import Ajv2020 from 'ajv/dist/2020'
import { addFormats } from '@feathersjs/schema'
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import knex from 'knex'
import { forEachDatabase, serverOn, type AppFactory, type TestServer } from './support/server'
import { createFixtureApp } from './support/fixture-app'
import { accessToken, announcementResource, bearer, createAuthApp } from './support/auth-app'
import { knexConfig } from '../example/database'
import { errorHandler, feathersQuery, feathersQueryState, openApiDocument } from '../src'
import { clearTables, seedTodoItems } from './support/seed'

type Document = any

async function fetchDocument(server: TestServer): Promise<Document> {
  const response = await server.http('GET', '/openapi.json')
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
  return response.body
}

async function assertValidOpenApi(document: Document) {
  const validator = new Validator()
  const result = await validator.validate(structuredClone(document))
  assert.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 2))
  assert.equal(result.valid, true)
  assert.equal(validator.version, '3.1')
}

const parameter = (operation: any, name: string) => operation.parameters?.find((p: any) => p.name === name)
const parameterNames = (operation: any) => (operation.parameters ?? []).map((p: any) => p.name)
const bodySchemaName = (operation: any) =>
  operation.requestBody.content['application/json'].schema.$ref.replace('#/components/schemas/', '')

/** Validates real responses against the document's own schemas (OpenAPI 3.1 schemas are JSON Schema 2020-12). */
function responseValidator(document: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv, ['date-time'])
  ajv.addSchema(document, 'openapi.json')
  return (schemaName: string, data: unknown) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${schemaName}`)!
    assert.ok(validate(data), `${schemaName}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(data)}`)
  }
}

/**
 * Every documented operation is served (not the "no such path" 404, not a 405), and a method that no
 * documented template matching the path offers is refused with 405: the document and the router agree.
 */
async function assertDocumentMatchesRoutes(server: TestServer, document: Document, id: string) {
  const templates = Object.entries<any>(document.paths).map(([template, item]) => ({
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    item
  }))
  for (const template of Object.keys(document.paths)) {
    const path = template.replace('{id}', id)
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const body = method === 'get' || method === 'delete' ? undefined : {}
      const response = await server.http(method.toUpperCase(), path, body)
      const described = `${method.toUpperCase()} ${path}: ${response.status} ${response.text.slice(0, 200)}`
      // `/widgets/export` is also `/widgets/{id}` to a PUT: the id "export".
      if (templates.some(({ pattern, item }) => item[method] && pattern.test(path))) {
        assert.notEqual(response.status, 405, described)
        assert.doesNotMatch(String(response.body?.message), /^Path .* not found/, described)
      } else {
        assert.equal(response.status, 405, described)
      }
    }
  }
}

forEachDatabase('OpenAPI: the example application', (env) => {
  let document: Document
  before(async () => {
    document = await fetchDocument(env.server)
  })
  beforeEach(() => clearTables(env.server.db))

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(document.openapi, '3.1.0')
    assert.equal(document.info.title, 'feathers-query example API')
    await assertValidOpenApi(document)
  })

  it('documents no security where no resource has guards', () => {
    assert.equal(document.components.securitySchemes, undefined)
    for (const item of Object.values<any>(document.paths)) {
      for (const operation of Object.values<any>(item)) {
        assert.equal(operation.security, undefined, operation.operationId)
        assert.equal(operation.responses['401'], undefined, operation.operationId)
      }
    }
  })

  it('describes every TodoItem endpoint with an operation id, a tag and its success status', () => {
    const operations = Object.entries<any>(document.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, operation]) => [method.toUpperCase(), path, operation] as const)
    )
    const todo = operations.filter(([, , operation]) => operation.tags.includes('TodoItem'))
    assert.deepEqual(
      todo.map(([method, path, operation]) => [
        method,
        path,
        operation.operationId,
        Object.keys(operation.responses)
      ]),
      [
        ['GET', '/todo-items', 'todoItems.queryMany', ['200', '400']],
        ['POST', '/todo-items', 'todoItems.createOne', ['201', '400', '415']],
        ['PATCH', '/todo-items', 'todoItems.patchMany', ['200', '400', '415']],
        ['DELETE', '/todo-items', 'todoItems.deleteMany', ['200', '400']],
        ['GET', '/todo-items/export', 'todoItems.exportMany', ['200', '400', '406']],
        ['GET', '/todo-items/aggregate', 'todoItems.aggregate', ['200', '400']],
        ['GET', '/todo-items/{id}', 'todoItems.findById', ['200', '400', '404']],
        ['PUT', '/todo-items/{id}', 'todoItems.updateOne', ['200', '400', '404', '412', '415']],
        ['PATCH', '/todo-items/{id}', 'todoItems.patchOne', ['200', '400', '404', '412', '415']],
        ['DELETE', '/todo-items/{id}', 'todoItems.deleteOne', ['200', '400', '404', '412']],
        ['POST', '/todo-items/import', 'todoItems.importMany', ['200', '400', '409', '413', '415', '422']]
      ]
    )
    const ids = operations.map(([, , operation]) => operation.operationId)
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique')
    assert.deepEqual(
      document.tags.map((tag: any) => tag.name),
      ['TodoItem', 'SubTask', 'Tag', 'TodoItemTag']
    )
    assert.deepEqual(parameter(document.paths['/todo-items/{id}'].get, 'id'), {
      name: 'id',
      in: 'path',
      required: true,
      description: 'TodoItem id',
      schema: { type: 'integer' }
    })
  })

  it('lists the query parameters with the types and bounds the endpoint validates with', () => {
    const list = document.paths['/todo-items'].get
    assert.deepEqual(parameterNames(list), [
      'limit',
      'offset',
      'id',
      'title',
      'description',
      'completed',
      'created',
      'updated',
      'priority',
      'subTasksCount',
      'query'
    ])
    assert.deepEqual(parameter(list, 'limit').schema, {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: 25
    })
    assert.deepEqual(parameter(list, 'offset').schema, {
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0
    })
    assert.deepEqual(parameter(list, 'completed').schema, { type: 'boolean' })
    assert.deepEqual(parameter(list, 'priority').schema, { type: 'number' })
    assert.deepEqual(parameter(list, 'created').schema, { type: 'string', format: 'date-time' })
    assert.deepEqual(parameter(list, 'query').schema, { type: 'string' })
    assert.equal(parameter(list, 'age'), undefined, 'age is not filterable')
    assert.ok(list.parameters.every((p: any) => p.in === 'query' && p.required === false))
    const exported = document.paths['/todo-items/export'].get
    assert.deepEqual(
      parameterNames(exported),
      [...parameterNames(list).slice(2), 'bom', 'dateFormat', 'resumable', 'after'],
      'export: the filters, no paging, the CSV parameters and resumption'
    )
    assert.deepEqual(Object.keys(exported.responses['200'].content), ['text/csv', 'application/x-ndjson'])
    assert.deepEqual(parameter(exported, 'bom').schema, {
      type: 'string',
      enum: ['true', 'false', '1', '0'],
      default: 'false'
    })
    assert.deepEqual(parameter(exported, 'dateFormat').schema, {
      anyOf: [
        { const: 'iso', type: 'string' },
        { const: 'spreadsheet', type: 'string' }
      ],
      default: 'iso'
    })
  })

  it('describes bodies from the create and update schemas and records from the serialized fields', () => {
    const { schemas } = document.components
    // TodoItem has multi: a record, or a list of them.
    assert.deepEqual(
      document.paths['/todo-items'].post.requestBody.content['application/json'].schema.anyOf,
      [
        { $ref: '#/components/schemas/TodoItemCreate' },
        { type: 'array', items: { $ref: '#/components/schemas/TodoItemCreate' }, maxItems: 100 }
      ]
    )
    assert.equal(bodySchemaName(document.paths['/todo-items/{id}'].put), 'TodoItemUpdate')
    assert.deepEqual(Object.keys(schemas.TodoItemCreate.properties), [
      'title',
      'description',
      'completed',
      'priority'
    ])
    assert.deepEqual(schemas.TodoItemCreate.required, ['title'])
    assert.equal(schemas.TodoItemCreate.additionalProperties, false)
    assert.deepEqual(schemas.TodoItemCreate.properties.description, {
      anyOf: [{ type: 'string', maxLength: 1000 }, { type: 'null' }]
    })
    assert.equal(schemas.TodoItemUpdate.required, undefined, 'updates are partial')
    assert.deepEqual(Object.keys(schemas.TodoItem.properties), [
      'id',
      'title',
      'description',
      'completed',
      'created',
      'updated',
      'age',
      'priority',
      'subTasksCount'
    ])
    assert.deepEqual(schemas.TodoItemOffsetConnection.required, ['pageInfo', 'nodes', 'totalCount'])
    assert.deepEqual(document.paths['/todo-items'].get.responses['400'], {
      $ref: '#/components/responses/BadRequest'
    })
    assert.deepEqual(document.components.responses.NotFound.content['application/json'].schema, {
      $ref: '#/components/schemas/FeathersError'
    })
    assert.ok(document.components.responses.MethodNotAllowed)
    assert.ok(document.components.responses.UnsupportedMediaType)
  })

  it('matches what the endpoints really answer', async () => {
    const check = responseValidator(document)
    const created = await env.server.http('POST', '/todo-items', { title: 'Docs', description: null })
    assert.equal(created.status, 201)
    check('TodoItem', created.body)
    const list = await env.server.http('GET', '/todo-items?limit=1')
    check('TodoItemOffsetConnection', list.body)
    check(
      'TodoItem',
      (await env.server.http('PATCH', `/todo-items/${created.body.id}`, { completed: true })).body
    )
    check(
      'SubTask',
      (await env.server.http('POST', '/sub-tasks', { title: 's', todoItemId: String(created.body.id) })).body
    )
    const invalid = await env.server.http('GET', '/todo-items?limit=51')
    assert.equal(invalid.status, 400)
    check('FeathersError', invalid.body)
    check('FeathersError', (await env.server.http('GET', '/todo-items/999999')).body)
    check('TodoItem', (await env.server.http('DELETE', `/todo-items/${created.body.id}`)).body)
  })

  it('agrees with the router on every path and method', async () => {
    await assertDocumentMatchesRoutes(env.server, document, '1')
  })

  it('describes the links of TodoItem.tags: create, delete by id, delete by the pair (multi remove)', async () => {
    const links = document.paths['/todo-item-tags']
    assert.deepEqual(Object.keys(links).sort(), ['delete', 'get', 'post'])
    assert.equal(links.post.operationId, 'todoItemTags.createOne')
    assert.deepEqual(document.components.schemas.TodoItemTagCreate.required, ['todoItemId', 'tagId'])
    assert.equal(links.delete.operationId, 'todoItemTags.deleteMany')
    assert.deepEqual(
      links.delete.parameters.map((entry: any) => [entry.name, entry.required]),
      [
        ['id', false],
        ['todoItemId', false],
        ['tagId', false]
      ]
    )
    assert.equal(document.paths['/todo-item-tags/{id}'].delete.operationId, 'todoItemTags.deleteOne')
    assert.equal(document.paths['/todo-item-tags/{id}'].put, undefined)
    assert.ok(document.paths['/tags'].get && document.paths['/tags/{id}'].patch)

    // What the document says is what the route does.
    const check = responseValidator(document)
    const [todoItemId] = await seedTodoItems(env.server.db, [{ title: 'tagged' }])
    const tag = await env.server.http('POST', '/tags', { name: 'urgent' })
    check('Tag', tag.body)
    const link = await env.server.http('POST', '/todo-item-tags', { todoItemId, tagId: tag.body.id })
    assert.equal(link.status, 201)
    check('TodoItemTag', link.body)
    const removed = await env.server.http(
      'DELETE',
      `/todo-item-tags?todoItemId=${todoItemId}&tagId=${tag.body.id}`
    )
    assert.equal(removed.status, 200, removed.text)
    assert.deepEqual(removed.body, [link.body])
  })
})

forEachDatabase(
  'OpenAPI: fixture resources (filterRequired, custom paths, disabled create, NONE paging, custom bodies)',
  (env) => {
    let document: Document
    before(async () => {
      document = await fetchDocument(env.server)
    })

    it('is a valid OpenAPI 3.1 document', async () => {
      await assertValidOpenApi(document)
    })

    it('Widget: required filter, its own page sizes, filterOnly left out of records, no create', () => {
      const list = document.paths['/widgets'].get
      assert.deepEqual(parameter(list, 'tenant'), {
        name: 'tenant',
        in: 'query',
        required: true,
        description: 'Only records whose tenant equals this value',
        schema: { type: 'string' }
      })
      assert.equal(parameter(document.paths['/widgets/export'].get, 'tenant').required, true)
      assert.deepEqual(parameter(list, 'limit').schema, {
        type: 'integer',
        minimum: 1,
        maximum: 3,
        default: 2
      })
      assert.deepEqual(parameter(list, 'rank').schema, { type: 'integer' })
      assert.ok(parameter(list, 'secret'), 'filterOnly fields can be filtered on')
      assert.ok(!('secret' in document.components.schemas.Widget.properties), 'but are never serialized')
      assert.equal(
        list.responses['200'].content['application/json'].schema.$ref,
        '#/components/schemas/WidgetOffsetConnection'
      )
      assert.deepEqual(document.components.schemas.WidgetOffsetConnection.required, ['pageInfo', 'nodes'])
      assert.equal(document.paths['/widgets'].post, undefined, 'create is disabled')
      assert.equal(document.components.schemas.WidgetCreate, undefined)
    })

    it('Widget: update and delete on their configured paths, with their descriptions', () => {
      assert.deepEqual(Object.keys(document.paths['/widgets/{id}']), ['get'])
      const rename = document.paths['/widgets/{id}/rename']
      assert.deepEqual(Object.keys(rename), ['put', 'patch'])
      assert.equal(rename.put.description, 'Rename a widget')
      assert.equal(rename.put.operationId, 'widgets.updateOne')
      assert.deepEqual(parameter(rename.put, 'id').schema, { type: 'integer' })
      const archive = document.paths['/widgets/{id}/archive']
      assert.deepEqual(Object.keys(archive), ['delete'])
      assert.equal(archive.delete.operationId, 'widgets.deleteOne')
    })

    it('Gadget: no paging, a bare array, search, string ids and the custom body schemas', () => {
      const list = document.paths['/gadgets'].get
      assert.deepEqual(parameterNames(list), ['query'], 'disableFilter and paging NONE leave only search')
      assert.deepEqual(list.responses['200'].content['application/json'].schema, {
        type: 'array',
        items: { $ref: '#/components/schemas/Gadget' }
      })
      assert.equal(document.components.schemas.GadgetOffsetConnection, undefined)
      assert.deepEqual(parameterNames(document.paths['/gadgets/export'].get), [
        'id',
        'name',
        'active',
        'query',
        'bom',
        'dateFormat',
        'resumable',
        'after'
      ])
      assert.ok(document.paths['/gadgets/export'].get.responses['200'].headers['X-Export-Row-Limit'])
      assert.deepEqual(parameter(document.paths['/gadgets/{id}'].get, 'id').schema, {
        type: 'string',
        minLength: 1
      })
      assert.deepEqual(document.components.schemas.GadgetCreate, {
        type: 'object',
        properties: {
          id: { type: 'string', minLength: 1 },
          name: { type: 'string' },
          active: { type: 'boolean' }
        },
        required: ['id', 'name', 'active'],
        additionalProperties: false
      })
      assert.deepEqual(document.components.schemas.GadgetUpdate, {
        type: 'object',
        properties: { active: { type: 'boolean' } },
        additionalProperties: false
      })
    })

    it('agrees with the router on every path and method', async () => {
      await assertDocumentMatchesRoutes(env.server, document, '1')
    })
  },
  createFixtureApp
)

/** Every operation of the document as `METHOD path` with its operation id, path templates filled with `id`. */
function operationsOf(document: Document, id: string) {
  return Object.entries<any>(document.paths).flatMap(([template, item]) =>
    Object.entries<any>(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: template.replace('{id}', id),
      operation
    }))
  )
}

forEachDatabase(
  'OpenAPI: guarded operations need a bearer token',
  (env) => {
    let document: Document
    before(async () => {
      document = await fetchDocument(env.server)
    })

    it('is a valid OpenAPI 3.1 document with a bearer JWT scheme', async () => {
      await assertValidOpenApi(document)
      assert.deepEqual(Object.keys(document.components.securitySchemes), ['authentication'])
      const scheme = document.components.securitySchemes.authentication
      assert.deepEqual([scheme.type, scheme.scheme, scheme.bearerFormat], ['http', 'bearer', 'JWT'])
      assert.ok(document.components.responses.NotAuthenticated)
    })

    it('puts security and the 401 on exactly the operations whose service method has guards', () => {
      const secured = (tag: string) =>
        operationsOf(document, '1')
          .filter(({ operation }) => operation.tags.includes(tag))
          .map(({ operation }) => {
            const has = operation.security !== undefined
            assert.equal('401' in operation.responses, has, operation.operationId)
            if (has) assert.deepEqual(operation.security, [{ authentication: [] }])
            return [operation.operationId, has]
          })
      // Guards on the resource: every operation.
      assert.ok(secured('TodoItem').every(([, has]) => has))
      // Guards on create, update.one and delete.one only: the reads are public.
      assert.deepEqual(secured('Announcement'), [
        ['announcements.queryMany', false],
        ['announcements.createOne', true],
        ['announcements.exportMany', false],
        ['announcements.findById', false],
        ['announcements.updateOne', true],
        ['announcements.patchOne', true],
        ['announcements.deleteOne', true],
        ['announcements.importMany', true]
      ])
      assert.ok(secured('Tag').every(([, has]) => !has))
    })

    it('agrees with the router: anonymous calls are a 401 exactly where the document says so', async () => {
      // The resources whose guards require a token (Note and Draft let anonymous callers reach authorize).
      const tags = ['TodoItem', 'SubTask', 'Tag', 'Announcement']
      // Multi patch and remove are Feathers' REST transport's, which this app does not configure.
      const operations = operationsOf(document, '1').filter(
        ({ operation }) =>
          tags.some((tag) => operation.tags.includes(tag)) &&
          !/\.(patch|delete)Many$/.test(operation.operationId)
      )
      for (const { method, path, operation } of operations) {
        // An import reads CSV: a JSON body would be its 415 before any guard ran, as for createOne's media.
        const csv = operation.operationId.endsWith('.importMany')
        const body = csv ? 'title\n' : method === 'GET' || method === 'DELETE' ? undefined : {}
        const response = await env.server.http(method, path, body, csv ? { 'content-type': 'text/csv' } : {})
        const described = `${method} ${path}: ${response.status} ${response.text.slice(0, 200)}`
        assert.equal(response.status === 401, operation.security !== undefined, described)
      }
      const token = await accessToken(env.server, 'ann')
      const list = await env.server.http('GET', '/todo-items', undefined, bearer(token))
      assert.equal(list.status, 200, list.text)
    })

    it('documents another scheme, or none, as openApiDocument is told', () => {
      const { resources } = feathersQueryState(env.server.app)!
      const apiKey = { type: 'apiKey', in: 'header', name: 'X-Api-Key' } as const
      const custom = openApiDocument(resources, { securityScheme: apiKey })
      assert.deepEqual(custom.components.securitySchemes, { authentication: apiKey })
      const none = openApiDocument(resources, { securityScheme: false })
      assert.equal(none.components.securitySchemes, undefined)
      for (const { operation } of operationsOf(none, '1')) {
        assert.equal(operation.security, undefined)
        assert.equal(operation.responses['401'], undefined)
      }
    })
  },
  createAuthApp
)

const API_KEY = { type: 'apiKey', in: 'header', name: 'X-Api-Key' } as const

/** Announcements (guarded writes) in an app whose configuration names another security scheme. */
const configuredSchemeApp: AppFactory = async (databaseUrl) => {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('announcements', (table) => {
    table.increments('id')
    table.string('text').notNullable()
  })
  const app = koa(feathers())
  app.set('feathersQuery', { openapi: { securityScheme: API_KEY } })
  app.use(errorHandler(() => {}))
  app.configure(feathersQuery({ Model: db, resources: [announcementResource] }))
  return { app, db }
}

describe("OpenAPI: the configuration's security scheme", () => {
  const env = serverOn('sqlite', configuredSchemeApp)

  it('documents the guarded operations with the scheme feathersQuery.openapi.securityScheme names', async () => {
    const document = await fetchDocument(env.server)
    await assertValidOpenApi(document)
    assert.deepEqual(document.components.securitySchemes, { authentication: API_KEY })
    assert.deepEqual(document.paths['/announcements'].post.security, [{ authentication: [] }])
    assert.equal(document.paths['/announcements'].get.security, undefined)
  })
})
