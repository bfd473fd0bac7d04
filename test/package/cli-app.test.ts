import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { cpSync, existsSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { io, type Socket } from 'socket.io-client'
import {
  applyReadme,
  cliAppWith,
  packRepository,
  replaceInFile,
  run,
  startCompiledApp,
  type CliApp,
  type Tarball
} from './cli-app-workspace'

/**
 * The package as a user gets it: packed, installed into an app the Feathers CLI generated, a resource added
 * as the README says, compiled by the app's own `npm run compile` and run with `node lib/` (no tsx, no
 * TypeScript at run time), then called over REST, GraphQL and socket.io with a JWT. Slow (an npm install
 * and a TypeScript compile), so it runs as `npm run test:package`, a step of its own in `.ci/run`.
 */
describe('the packed package in a Feathers CLI app', function () {
  this.timeout(20 * 60 * 1000)
  let tarball: Tarball
  let app: CliApp
  let server: ChildProcess
  let url: string

  const freePort = () =>
    new Promise<number>((resolvePort) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolvePort(port))
      })
    })

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (token) headers.authorization = `Bearer ${token}`
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body)
    })

    return { status: response.status, body: (await response.json()) as any }
  }

  const signUp = async (email: string) => {
    assert.equal((await call('POST', '/users', { email, password: 'secret' })).status, 201)
    const login = await call('POST', '/authentication', { strategy: 'local', email, password: 'secret' })
    assert.equal(login.status, 201)
    return login.body.accessToken as string
  }

  const graphql = (query: string, token?: string) => call('POST', '/graphql', { query }, token)

  before(async function () {
    tarball = packRepository()
    app = cliAppWith(tarball)
    const written = applyReadme(app)
    assert.deepEqual(written.sort(), [
      'migrations/20260101000000_todo_items.ts',
      'src/services/index.ts',
      'src/services/todo-items/todo-items.ts'
    ])
    // The README's src/channels.ts change: the generated publisher gives way to the authorized one.
    replaceInFile(
      app,
      'src/channels.ts',
      /\n {2}\/\/ eslint-disable-next-line no-unused-vars\n {2}app\.publish\([\s\S]*?\n {2}\}\)\n/,
      `
  app.publish(authorizedPublisher(() => app.channel('authenticated')))
`
    )
    replaceInFile(app, 'src/channels.ts', /^/, "import { authorizedPublisher } from 'feathers-query'\n")
    // The README's src/app.ts change: the plugin's error handler in place of @feathersjs/koa's.
    replaceInFile(
      app,
      'src/app.ts',
      "import { koa, rest, bodyParser, errorHandler, parseAuthentication, cors, serveStatic } from '@feathersjs/koa'",
      "import { koa, rest, bodyParser, parseAuthentication, cors, serveStatic } from '@feathersjs/koa'\n" +
        "import { errorHandler } from 'feathers-query'"
    )
    // Every export, compiled with the app's tsconfig too (only compiled: the app does not load it).
    cpSync(join(__dirname, 'every-export.ts'), join(app.dir, 'src/every-export.ts'))
    run('npm', ['run', 'compile'], app.dir)
    rmSync(join(app.dir, 'feathers-chat.sqlite'), { force: true })
    run('npm', ['run', 'migrate'], app.dir)
    const port = await freePort()
    url = `http://localhost:${port}`
    server = await startCompiledApp(app, port)
  })

  after(() => {
    server?.kill()
  })

  it('ships compiled JavaScript with declarations, and nothing of the repository besides', () => {
    assert.ok(tarball.files.includes('lib/index.js') && tarball.files.includes('lib/index.d.ts'))
    assert.ok(tarball.files.includes('lib/pages.js') && tarball.files.includes('lib/pages.d.ts'))
    const outside = tarball.files.filter((file) => !/^(lib\/|package\.json$|README\.md$|LICENSE)/.test(file))
    assert.deepEqual(outside, [])
    assert.ok(!tarball.files.some((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')))
    console.log(
      `      tarball ${(tarball.size / 1024).toFixed(0)} kB (${(tarball.unpackedSize / 1024).toFixed(0)} kB unpacked), ` +
        `${app.added.length} packages added to the app (${(app.addedBytes / 2 ** 20).toFixed(1)} MB): ` +
        app.added.map((path) => path.replace(/^node_modules\//, '')).join(', ')
    )
  })

  it('loads from ESM as well, both entries with named exports', () => {
    const source = `import { feathersQuery, IDField } from 'feathers-query'
import { swaggerUi } from 'feathers-query/pages'
console.log([feathersQuery, IDField, swaggerUi].map((value) => typeof value).join())`
    assert.equal(
      run(process.execPath, ['--input-type=module', '-e', source], app.dir).trim(),
      'function,function,function'
    )
  })

  it('type-checks every export in the app, declarations included', () => {
    assert.ok(existsSync(join(app.dir, 'lib/every-export.d.ts')))
    assert.ok(existsSync(join(app.dir, 'lib/services/todo-items/todo-items.d.ts')))
  })

  it("passes the app's own npm test (mocha with ts-node), the resource loaded with the app", () => {
    assert.match(run('npm', ['test'], app.dir), /5 passing/)
  })

  it('adds no second copy of Feathers or knex, no TypeScript, no database driver and no page assets', () => {
    const forbidden =
      /(^|\/)(@feathersjs\/[^/]+|knex|typescript|tsx|esbuild|better-sqlite3|mysql2|sqlite3|react|react-dom|graphiql|swagger-ui-dist)$/
    assert.deepEqual(
      app.added.filter((path) => forbidden.test(path)),
      []
    )
    assert.ok(!existsSync(join(app.dir, 'node_modules/feathers-query/node_modules/@feathersjs')))
  })

  it('names what to install for a browser page whose packages the app lacks', () => {
    const start = (page: string) => {
      try {
        run(process.execPath, ['-e', `require('feathers-query/pages').${page}()`], app.dir)
        return 'started'
      } catch (error) {
        return (error as { stderr: string }).stderr
      }
    }
    assert.match(
      start('graphiql'),
      /ConfigurationError: The GraphiQL page needs graphiql, react, react-dom, not installed: npm install graphiql@\^4 react@\^18 react-dom@\^18/
    )
    assert.match(
      start('swaggerUi'),
      /The Swagger UI page needs swagger-ui-dist, not installed: npm install swagger-ui-dist@\^5/
    )
  })

  it('serves the resource over REST to a user with a JWT, with errors as the app renders them', async () => {
    const ann = await signUp('ann@example.com')
    const created = await call('POST', '/todo-items', { title: 'Write docs' }, ann)
    assert.equal(created.status, 201)
    assert.deepEqual(created.body, { id: created.body.id, title: 'Write docs', description: null })
    const page = await call('GET', '/todo-items?limit=10', undefined, ann)
    assert.equal(page.status, 200)
    assert.deepEqual(
      page.body.nodes.map((item: { title: string }) => item.title),
      ['Write docs']
    )
    // One copy of @feathersjs/errors: the plugin's NotFound is a 404 through the app's error handler.
    const missing = await call('GET', '/todo-items/999999', undefined, ann)
    assert.equal(missing.status, 404)
    assert.equal(missing.body.name, 'NotFound')
    assert.equal((await call('GET', '/todo-items')).status, 401)
    // Another user does not see Ann's items (the resource's authorize rule).
    const bob = await signUp('bob@example.com')
    assert.deepEqual((await call('GET', '/todo-items', undefined, bob)).body.nodes, [])
  })

  it("answers bodies it cannot read with 400 and 413 in Feathers error JSON, the app's own services too", async () => {
    const erin = await signUp('erin@example.com')
    const send = async (path: string, body: string) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${erin}` },
        body
      })

      return { status: response.status, body: (await response.json()) as any }
    }
    for (const path of ['/todo-items', '/users']) {
      const broken = await send(path, '{"title": "unterminated')
      assert.equal(broken.status, 400, JSON.stringify(broken.body))
      assert.equal(broken.body.name, 'BadRequest')
      const huge = await send(path, JSON.stringify({ title: 'x'.repeat(2 * 2 ** 20) }))
      assert.equal(huge.status, 413, JSON.stringify(huge.body).slice(0, 200))
    }
    const graphqlBroken = await send('/graphql', '{"query": ')
    assert.equal(graphqlBroken.body.errors[0].extensions.code, 'BAD_REQUEST')
  })

  it('answers GraphQL with the JWT, and refuses it without', async () => {
    const token = await signUp('carl@example.com')
    await call('POST', '/todo-items', { title: 'Carl\u2019s item', description: 'over GraphQL' }, token)
    const answer = await graphql('{ todoItems { totalCount edges { node { title description } } } }', token)
    assert.equal(answer.status, 200)
    assert.deepEqual(answer.body.data.todoItems, {
      totalCount: 1,
      edges: [{ node: { title: 'Carl\u2019s item', description: 'over GraphQL' } }]
    })
    const anonymous = await graphql('{ todoItems { totalCount } }')
    assert.equal(anonymous.body.errors[0].extensions.code, 'UNAUTHENTICATED')
  })

  it('serves socket.io clients that authenticate with the JWT, events included', async () => {
    const token = await signUp('dora@example.com')
    const socket: Socket = io(url, { transports: ['websocket'] })
    const emit = (...args: unknown[]) =>
      new Promise<any>((resolveCall, reject) =>
        socket.emit(...(args as [string]), (error: unknown, result: unknown) =>
          error ? reject(error) : resolveCall(result)
        )
      )
    try {
      await emit('create', 'authentication', { strategy: 'jwt', accessToken: token })
      const event = new Promise<any>((resolveEvent) => socket.once('todo-items created', resolveEvent))
      await call('POST', '/todo-items', { title: 'Over a socket' }, token)
      assert.deepEqual(await event, { id: (await event).id, title: 'Over a socket', description: null })
      const page = await emit('find', 'todo-items', { title: 'Over a socket' })
      assert.deepEqual(
        page.data.map((item: { title: string }) => item.title),
        ['Over a socket']
      )
    } finally {
      socket.close()
    }
  })
})
