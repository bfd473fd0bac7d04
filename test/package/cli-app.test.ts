import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { io, type Socket } from 'socket.io-client'
import { freePort } from '../support/free-port'
import {
  applyReadme,
  cliAppWith,
  packRepository,
  readmeCommands,
  replaceInFile,
  run,
  runInApp,
  startCompiledApp,
  type CliApp,
  type Tarball
} from './cli-app-workspace'

/**
 * The package as a user gets it: packed, installed into an app the Feathers CLI generated, a resource added
 * as docs/guide/getting-started.md says (its migration written by the package's `npx feathers-query migration`
 * with the app's ts-node, applied by the app's `npm run migrate`), compiled by the app's own `npm run compile`
 * and run with `node lib/` (no tsx, no TypeScript at run time), then called over REST, GraphQL and socket.io
 * with a JWT, and stopped with SIGTERM. Slow (an npm install and a TypeScript compile), so it runs as
 * `npm run test:package`, a step of its own in `.ci/run`.
 */
describe('the packed package in a Feathers CLI app', function () {
  this.timeout(20 * 60 * 1000)
  let tarball: Tarball
  let app: CliApp
  let server: ChildProcess
  let url: string
  /** The guide's step 5: the migration command's output, the migrations before it, and `npm run migrate`'s. */
  let migrationOutput: string
  let fixtureMigrations: string[]
  let migrateOutput: string

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
      'src/hooks/owner.ts',
      'src/index.ts',
      'src/services/index.ts',
      'src/services/projects/projects.shared.ts',
      'src/services/projects/projects.ts',
      'src/services/tasks/tasks.shared.ts',
      'src/services/tasks/tasks.ts'
    ])
    // src/channels.ts stays as the CLI generated it: every event to every authenticated connection.
    // The guide's src/app.ts change: the plugin's error handler, and the app's logger for the plugin.
    replaceInFile(
      app,
      'src/app.ts',
      "import { koa, rest, bodyParser, errorHandler, parseAuthentication, cors, serveStatic } from '@feathersjs/koa'",
      "import { koa, rest, bodyParser, parseAuthentication, cors, serveStatic } from '@feathersjs/koa'\n" +
        "import { errorHandler, feathersQuery } from 'feathers-query'\n" +
        "import { logger } from './logger'"
    )
    replaceInFile(
      app,
      'src/app.ts',
      'app.configure(services)',
      'app.configure(feathersQuery({ logger, health: true }))\napp.configure(services)'
    )
    // The guide's src/configuration.ts change: Feathers' validation checks the plugin's configuration too.
    replaceInFile(
      app,
      'src/configuration.ts',
      '    public: Type.String()',
      '    public: Type.String(),\n    feathersQuery: Type.Optional(Type.Unsafe<FeathersQueryConfiguration>(feathersQueryConfiguration))'
    )
    replaceInFile(
      app,
      'src/configuration.ts',
      /^/,
      "import { feathersQueryConfiguration, type FeathersQueryConfiguration } from 'feathers-query'\n"
    )
    // The guide's src/client.ts change: the typed resource services of the client entry.
    replaceInFile(
      app,
      'src/client.ts',
      '  client.configure(userClient)',
      '  client.configure(userClient)\n  client.configure(projectClient)\n  client.configure(taskClient)'
    )
    replaceInFile(
      app,
      'src/client.ts',
      /^/,
      "import { projectClient } from './services/projects/projects.shared'\n" +
        "import { taskClient } from './services/tasks/tasks.shared'\n"
    )
    // Configured options are read (and validated): GraphQL's path from config/default.json.
    replaceInFile(
      app,
      'config/default.json',
      '"paginate": {',
      '"feathersQuery": { "graphql": { "path": "/graphql" } },\n  "paginate": {'
    )
    // Every export, and what the typed services accept and refuse, compiled with the app's tsconfig too
    // (only compiled: the app does not load them). A `@ts-expect-error` that is no error fails the compile.
    cpSync(join(__dirname, 'every-export.ts'), join(app.dir, 'src/every-export.ts'))
    cpSync(join(__dirname, 'typed-services.ts'), join(app.dir, 'src/typed-services.ts'))
    // The guide's step 5, as typed in the app's folder: the migration written from the resources' schemas
    // by the installed package's bin (src/app.ts loaded with the app's ts-node), then `npm run migrate`.
    rmSync(join(app.dir, 'feathers-chat.sqlite'), { force: true })
    const commands = readmeCommands()
    assert.equal(commands.length, 2, commands.join('\n'))
    assert.match(commands[0], /^npx feathers-query migration( |$)/)
    assert.equal(commands[1], 'npm run migrate')
    fixtureMigrations = readdirSync(join(app.dir, 'migrations'))
    migrationOutput = runInApp(app, commands[0])
    migrateOutput = runInApp(app, commands[1])
    run('npm', ['run', 'compile'], app.dir)
    const port = await freePort()
    url = `http://localhost:${port}`
    server = await startCompiledApp(app, port)
  })

  after(() => {
    if (server?.exitCode === null) server.kill('SIGKILL')
  })

  it("writes the guide's migration from the schemas with the app's ts-node, which knex applies", () => {
    assert.match(migrationOutput, /^Loaded src\/app\.ts with ts-node, transpiling only\.$/m)
    const added = readdirSync(join(app.dir, 'migrations')).filter((file) => !fixtureMigrations.includes(file))
    assert.equal(added.length, 1, added.join())
    const [file] = added
    assert.match(file, /^\d{14}_projects_and_tasks\.ts$/)
    assert.match(migrationOutput, new RegExp(`^Wrote migrations/${file}: `, 'm'))
    const migration = readFileSync(join(app.dir, 'migrations', file), 'utf8')
    assert.ok(migration.includes(`//   ${readmeCommands()[0]}\n`), migration.slice(0, 300))
    assert.match(migration, /createTable\('projects'[\s\S]*createTable\('tasks'/)
    assert.match(migration, /table\.integer\('projectId'\)[^\n]*\.references\('id'\)\.inTable\('projects'\)/)
    // What knex ran: the CLI's own migrations and the written one, no other.
    assert.match(migrateOutput, /Batch 1 run: \d+ migrations/)
    const source = `const db = require('knex')(require('./config/default.json').sqlite)
db('knex_migrations').orderBy('id').pluck('name').then((names) => console.log(JSON.stringify(names))).finally(() => db.destroy())`
    const applied = JSON.parse(run(process.execPath, ['-e', source], app.dir))
    assert.deepEqual(applied, [...fixtureMigrations.sort(), file])
    // The tables fit the schemas: the app started (its start-up check is on), and --diff has nothing to write.
    const diff = runInApp(app, 'npx feathers-query migration --diff')
    assert.match(diff, /The tables fit the resources' schemas: no migration written\./)
    assert.deepEqual(readdirSync(join(app.dir, 'migrations')).sort(), [...fixtureMigrations, file].sort())
  })

  it('answers the readiness and liveness probes (feathersQuery({ health: true }))', async () => {
    const ready = await call('GET', '/health/ready')
    assert.equal(ready.status, 200, JSON.stringify(ready.body))
    assert.equal(ready.body.status, 'ready')
    assert.deepEqual(
      ready.body.databases.map((database: { client: string; status: string }) => [
        database.client,
        database.status
      ]),
      [['sqlite', 'up']]
    )
    assert.deepEqual(await call('GET', '/health/live'), { status: 200, body: { status: 'alive' } })
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
import { resourceClient } from 'feathers-query/client'
console.log([feathersQuery, IDField, swaggerUi, resourceClient].map((value) => typeof value).join())`
    assert.equal(
      run(process.execPath, ['--input-type=module', '-e', source], app.dir).trim(),
      'function,function,function,function'
    )
  })

  it('loads the client entry without the server: no knex, Koa or GraphQL in a browser bundle', () => {
    const source = `require('feathers-query/client')
const loaded = Object.keys(require.cache).filter((file) => /node_modules\\/(knex|koa|graphql|@feathersjs\\/koa)\\//.test(file))
console.log(JSON.stringify(loaded))`
    assert.equal(run(process.execPath, ['-e', source], app.dir).trim(), '[]')
  })

  it('type-checks every export and the typed services in the app, declarations included', () => {
    assert.ok(existsSync(join(app.dir, 'lib/every-export.d.ts')))
    assert.ok(existsSync(join(app.dir, 'lib/typed-services.d.ts')))
    assert.ok(existsSync(join(app.dir, 'lib/services/tasks/tasks.d.ts')))
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

  it('serves both resources over REST to a user with a JWT, with errors as the app renders them', async () => {
    const ann = await signUp('ann@example.com')
    const project = await call('POST', '/projects', { name: 'Docs' }, ann)
    assert.equal(project.status, 201, JSON.stringify(project.body))
    assert.deepEqual(project.body, { id: project.body.id, name: 'Docs' })
    const task = await call('POST', '/tasks', { title: 'Write docs', projectId: project.body.id }, ann)
    assert.equal(task.status, 201, JSON.stringify(task.body))
    assert.deepEqual(task.body, {
      id: task.body.id,
      title: 'Write docs',
      done: false,
      projectId: project.body.id
    })
    const page = await call('GET', '/tasks?limit=10', undefined, ann)
    assert.equal(page.status, 200)
    assert.deepEqual(
      page.body.nodes.map((item: { title: string }) => item.title),
      ['Write docs']
    )
    // One copy of @feathersjs/errors: the plugin's NotFound is a 404 through the app's error handler.
    const missing = await call('GET', '/tasks/999999', undefined, ann)
    assert.equal(missing.status, 404)
    assert.equal(missing.body.name, 'NotFound')
    assert.equal((await call('GET', '/tasks')).status, 401)
    // Another user does not see Ann's records (the resources' authorize rule).
    const bob = await signUp('bob@example.com')
    assert.deepEqual((await call('GET', '/tasks', undefined, bob)).body.nodes, [])
    assert.deepEqual((await call('GET', '/projects', undefined, bob)).body.nodes, [])
    // The guide's guards are the resources': the OpenAPI document marks their operations as needing the JWT.
    const openapi = await call('GET', '/openapi.json')
    assert.equal(openapi.status, 200)
    assert.deepEqual(openapi.body.paths['/tasks'].get.security, [{ authentication: [] }])
    assert.deepEqual(openapi.body.paths['/projects'].post.security, [{ authentication: [] }])
  })

  it("pages by the app's paginate of config/default.json (default 10, max 50)", async () => {
    const fay = await signUp('fay@example.com')
    const project = await call('POST', '/projects', { name: 'Many' }, fay)
    for (let index = 0; index < 12; index++) {
      await call('POST', '/tasks', { title: `task ${index}`, projectId: project.body.id }, fay)
    }
    const page = await call('GET', '/tasks', undefined, fay)
    assert.deepEqual([page.body.nodes.length, page.body.totalCount], [10, 12])
    assert.equal((await call('GET', '/tasks?limit=50', undefined, fay)).status, 200)
    assert.equal((await call('GET', '/tasks?limit=51', undefined, fay)).status, 400)
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

  it('answers GraphQL with the JWT across both service files, and refuses it without', async () => {
    const token = await signUp('carl@example.com')
    const project = await call('POST', '/projects', { name: 'Carl\u2019s project' }, token)
    await call('POST', '/tasks', { title: 'over GraphQL', projectId: project.body.id }, token)
    const answer = await graphql(
      '{ projects { edges { node { name tasks { edges { node { title project { name } } } } } } } }',
      token
    )
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    assert.deepEqual(answer.body.data.projects.edges, [
      {
        node: {
          name: 'Carl\u2019s project',
          tasks: { edges: [{ node: { title: 'over GraphQL', project: { name: 'Carl\u2019s project' } } }] }
        }
      }
    ])
    const anonymous = await graphql('{ tasks { totalCount } }')
    assert.equal(anonymous.body.errors[0].extensions.code, 'UNAUTHENTICATED')
  })

  it("gives the app's typed REST client Feathers' shapes and aggregate, with no header of its own", async () => {
    const token = await signUp('gus@example.com')
    // The app's own compiled client (src/client.ts with the guide's lines) over its @feathersjs/rest-client.
    const fromApp = createRequire(join(app.dir, 'package.json'))
    const { createClient } = fromApp('./lib/client.js')
    const rest = fromApp('@feathersjs/rest-client')
    const client = createClient(rest(url).fetch(fetch))
    await client.authenticate({ strategy: 'jwt', accessToken: token })
    const project = await client.service('projects').create({ name: 'typed' })
    await client.service('tasks').create({ title: 'one', projectId: project.id })
    await client.service('tasks').create({ title: 'two', projectId: project.id, done: true })
    const page = await client.service('tasks').find({ query: { done: false, $sort: { title: 1 } } })
    assert.deepEqual(
      [page.total, page.limit, page.skip, page.data.map((task: { title: string }) => task.title)],
      [1, 10, 0, ['one']]
    )
    const counts = await client.service('tasks').aggregate({ groupBy: [{ field: 'done' }], count: ['id'] })
    assert.deepEqual(counts.map((group: any) => [group.groupBy.done, group.count.id]).sort(), [
      [false, 1],
      [true, 1]
    ])
  })

  it("serves socket.io clients with the JWT, and the CLI's channels.ts sends no user another's records", async () => {
    const connect = async (email: string) => {
      const token = await signUp(email)
      const socket: Socket = io(url, { transports: ['websocket'] })
      const emit = (...args: unknown[]) =>
        new Promise<any>((resolveCall, reject) =>
          socket.emit(...(args as [string]), (error: unknown, result: unknown) =>
            error ? reject(error) : resolveCall(result)
          )
        )
      await emit('create', 'authentication', { strategy: 'jwt', accessToken: token })
      const created: Array<{ title: string }> = []
      socket.on('tasks created', (task: { title: string }) => created.push(task))
      return { token, socket, emit, created }
    }
    const dora = await connect('dora@example.com')
    const eli = await connect('eli@example.com')
    try {
      const project = await dora.emit('create', 'projects', { name: 'Sockets' })
      const task = await dora.emit('create', 'tasks', { title: 'Over a socket', projectId: project.id })
      assert.deepEqual(task, { id: task.id, title: 'Over a socket', done: false, projectId: project.id })
      const page = await dora.emit('find', 'tasks', { title: 'Over a socket' })
      assert.deepEqual(
        [page.total, page.limit, page.data.map((item: { title: string }) => item.title)],
        [1, 10, ['Over a socket']]
      )
      // Eli's own write comes after Dora's: once he hears it, he would have heard hers first.
      const own = await eli.emit('create', 'projects', { name: 'Eli' })
      await eli.emit('create', 'tasks', { title: 'Eli only', projectId: own.id })
      const deadline = Date.now() + 5000
      while (eli.created.length === 0 || dora.created.length === 0) {
        assert.ok(Date.now() < deadline, 'the events did not arrive')
        await new Promise((resolveWait) => setTimeout(resolveWait, 10))
      }
      assert.deepEqual(
        eli.created.map((item) => item.title),
        ['Eli only']
      )
      assert.deepEqual(dora.created, [
        { id: task.id, title: 'Over a socket', done: false, projectId: project.id }
      ])
    } finally {
      dora.socket.close()
      eli.socket.close()
    }
  })

  it('ends with exit code 0 on SIGTERM (gracefulShutdown in src/index.ts)', async () => {
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolveExit) =>
      server.once('exit', (code, signal) => resolveExit([code, signal]))
    )
    assert.ok(server.kill('SIGTERM'))
    assert.deepEqual(await exited, [0, null])
  })
})
