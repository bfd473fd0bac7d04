import assert from 'node:assert/strict'
import { createApp } from '../example/app'
import { startServer, type TestServer } from './support/server'
import { databaseNames } from './support/databases'
import { seedTodoItems } from './support/seed'
import { TcpProxy } from './support/tcp-proxy'

/**
 * The database goes away while the server runs, then comes back. Only a networked database can go away,
 * so this runs on MariaDB/MySQL (MYSQL_URL) and is skipped on SQLite.
 */
describe('Database faults [mysql]', function () {
  let server: TestServer
  let proxy: TcpProxy

  before(async function () {
    if (!databaseNames.includes('mysql')) {
      console.log('    (skipped: set MYSQL_URL to run the database fault tests)')
      this.skip()
    }
    const target = new URL(process.env.MYSQL_URL!)
    proxy = new TcpProxy(target.hostname, Number(target.port || 3306))
    await proxy.start()
    server = await startServer('mysql', (databaseUrl) => {
      const url = new URL(databaseUrl)
      url.hostname = '127.0.0.1'
      url.port = String(proxy.port)
      return createApp({ databaseUrl: url.toString() })
    })
    await seedTodoItems(server.db, [{ title: 'survivor' }])
  })

  after(async () => {
    await proxy?.restore()
    await server?.close()
    await proxy?.stop()
  })

  async function timed<T>(work: () => Promise<T>) {
    const started = Date.now()
    const result = await work()
    return { result, ms: Date.now() - started }
  }

  it('fails fast with 503 in Feathers error JSON while the database is down, and serves again once it is back', async function () {
    this.timeout(60000)
    assert.equal((await server.http('GET', '/todo-items')).status, 200)

    await proxy.cut()
    for (const path of ['/todo-items', '/todo-items/1', '/todo-items/export']) {
      const { result, ms } = await timed(() => server.http('GET', path))
      assert.equal(result.status, 503, `${path}: ${result.text}`)
      assert.equal(result.body.name, 'Unavailable')
      assert.equal(result.body.className, 'unavailable')
      assert.ok(ms < 6000, `${path} took ${ms} ms to fail`)
    }
    const write = await server.http('POST', '/todo-items', { title: 'lost' })
    assert.equal(write.status, 503)
    const graphql = await server.http('POST', '/graphql', { query: '{ todoItems { edges { node { id } } } }' })
    assert.ok(graphql.status < 500, `GraphQL answered ${graphql.status}`)
    assert.equal(graphql.body.errors[0].extensions.code, 'SERVICE_UNAVAILABLE')

    await proxy.restore()
    let recovered = false
    for (let attempt = 0; attempt < 5 && !recovered; attempt++) {
      recovered = (await server.http('GET', '/todo-items')).status === 200
    }
    assert.ok(recovered, 'the same server process serves again')
    const list = await server.http('GET', '/todo-items')
    assert.deepEqual(list.body.nodes.map((node: { title: string }) => node.title), ['survivor'])
    assert.equal((await server.http('POST', '/todo-items', { title: 'back' })).status, 201)
  })
})
