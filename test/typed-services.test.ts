import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import { Type as TypeBox025 } from '@feathersjs/typebox'
import { Type } from '@sinclair/typebox'
import ts from 'typescript'
import { Field, FilterableField, IDField } from '../src'
import { resourceClient, type ResourceClientService } from '../src/client'
import { serverOn } from './support/server'

const ROOT = path.resolve(__dirname, '..')

/**
 * The type errors of the fixtures in test/typed/ (a server app and a client app using the services' types,
 * laid out as a Feathers CLI app), compiled with the project's compiler and options. A `@ts-expect-error`
 * line that is no longer an error is one too (TS2578), so every refusal the fixtures mark is checked.
 * `extra` adds files by name and text, beside the fixtures but never written.
 */
function typeErrors(files: string[], extra: Record<string, string> = {}): string[] {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (name) => ts.sys.readFile(name))
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT)
  const options = { ...config.options, noEmit: true }
  const virtual = new Map(
    Object.entries(extra).map(([name, text]) => [path.join(ROOT, 'test/typed', name), text])
  )
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (name) => virtual.has(name) || fileExists(name)
  host.readFile = (name) => virtual.get(name) ?? readFile(name)
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name)
    return text === undefined
      ? getSourceFile(name, language, ...rest)
      : ts.createSourceFile(name, text, language)
  }
  // The project's own declarations (modules without types of their own) come along, as `tsc` includes them.
  const declarations = config.fileNames.filter((name) => name.endsWith('.d.ts'))
  const roots = [
    ...declarations,
    ...files.map((file) => path.join(ROOT, 'test/typed', file)),
    ...virtual.keys()
  ]
  const program = ts.createProgram(roots, options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    if (!diagnostic.file || diagnostic.start === undefined) return message
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${path.relative(ROOT, diagnostic.file.fileName)}:${line + 1}: ${message}`
  })
}

describe('Typed services: records, data and queries typed from the TypeBox schema', function () {
  this.timeout(120000)

  it('type-checks the server and client fixtures: typed reads compile, every marked mistake is an error', () => {
    assert.deepEqual(typeErrors(['server.ts', 'client.ts']), [])
  })

  it('a wrong type read from a record is an error: the harness sees type errors, and records are not `any`', () => {
    const wrongRead = [
      "import type { Application } from './declarations'",
      "import './server'",
      'export async function wrongRead(app: Application) {',
      "  const title: number = (await app.service('tasks').get(1)).title",
      '  return title',
      '}'
    ].join('\n')
    const errors = typeErrors(['server.ts'], { 'wrong-read.ts': wrongRead })
    assert.deepEqual(errors, [
      "test/typed/wrong-read.ts:4: Type 'string' is not assignable to type 'number'."
    ])
  })

  it('feathers-query/client loads nothing of the server at run time', () => {
    const script = "require('./src/client'); console.log(JSON.stringify(Object.keys(require.cache)))"
    const output = execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8'
    })
    const loaded = (JSON.parse(output) as string[]).map((file) => path.relative(ROOT, file))
    const server = loaded.filter((file) =>
      /node_modules\/(knex|koa|@koa|graphql|graphql-http|graphql-ws|@sinclair|@feathersjs\/koa)\//.test(file)
    )
    assert.deepEqual(server, [])
    const plugin = loaded.filter((file) => file.startsWith('src/'))
    assert.deepEqual(plugin.sort(), ['src/client.ts', 'src/common/query-syntax.ts'])
  })
})

describe("The annotations' readOnly and default options", () => {
  for (const [version, T] of [
    ['0.34', Type],
    ['0.25', TypeBox025]
  ] as const) {
    it(`write the schema the readOnly and default keywords write (TypeBox ${version})`, () => {
      assert.deepStrictEqual(IDField(T.Integer(), { readOnly: true }), IDField(T.Integer({ readOnly: true })))
      assert.deepStrictEqual(
        FilterableField(T.String(), { readOnly: true, nullable: true }),
        FilterableField(T.String({ readOnly: true }), { nullable: true })
      )
      assert.deepStrictEqual(Field(T.String(), { readOnly: true }), Field(T.String({ readOnly: true })))
      assert.deepStrictEqual(
        FilterableField(T.Boolean(), { default: false }),
        FilterableField(T.Boolean({ default: false }))
      )
      assert.notDeepStrictEqual(IDField(T.Integer(), { readOnly: true }), IDField(T.Integer()))
    })
  }
})

describe('resourceClient: a Feathers REST client service that speaks Feathers on the base path [sqlite]', function () {
  const env = serverOn('sqlite')

  function clientApp(configure: boolean) {
    const client = feathers<{ 'todo-items': ResourceClientService }>()
    const connection = restClient(env.server.baseUrl).fetch(fetch)
    client.configure(connection)
    client.set('connection', connection)
    if (configure) client.configure(resourceClient('todo-items'))
    return client
  }

  it("answers find in Feathers' shape with Feathers' syntax, which without the header is a 400", async () => {
    await env.server.http('POST', '/todo-items', { title: 'listed' }, { 'user-name': 'ann' })
    const page = await clientApp(true)
      .service('todo-items')
      .find({ query: { $limit: 1, $sort: { id: 1 } } })
    assert.deepEqual(Object.keys(page).sort(), ['data', 'limit', 'skip', 'total'])
    assert.equal(page.limit, 1)
    await assert.rejects(
      clientApp(false)
        .service('todo-items')
        .find({ query: { $limit: 1 } }),
      {
        code: 400
      }
    )
  })

  it("keeps the caller's headers, and offers aggregate", async () => {
    const todos = clientApp(true).service('todo-items')
    const created = await todos.create({ title: 'audited' }, { headers: { 'user-name': 'bea' } })
    const groups = await todos.aggregate(
      { groupBy: [{ field: 'createdBy' }], count: ['id'] },
      { query: { id: created.id } }
    )
    assert.deepEqual(groups, [{ groupBy: { createdBy: 'bea' }, count: { id: 1 } }])
  })
})
