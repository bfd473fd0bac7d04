import assert from 'node:assert/strict'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startServer, type AppFactory, type TestServer } from './support/server'
import { seedTodoItems } from './support/seed'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { graphiql, swaggerUi } from '../src/pages'
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './support/chromium'

/** A page that records every request it makes and every error it logs (CSP violations included). */
async function openPage(browser: Browser) {
  const context = await browser.newContext()
  const page = await context.newPage()
  const requests: string[] = []
  const errors: string[] = []
  page.on('request', (request) => requests.push(request.url()))
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  return { page, requests, errors }
}

/** Nothing but this machine: data: URLs (inline fonts and icons) never reach the network. */
function assertLocalOnly(requests: string[]) {
  assert.ok(requests.length > 0)
  const foreign = requests.filter((url) => {
    if (url.startsWith('data:')) return false
    const { hostname } = new URL(url)
    return hostname !== '127.0.0.1' && hostname !== 'localhost'
  })
  assert.deepEqual(foreign, [])
}

/** Swagger UI's element of an operation: its id is the tag and the operation id, the dot escaped. */
function swaggerOperation(page: Page, tag: string, operationId: string) {
  return page.locator(`[id="operations-${tag}-${operationId.replace('.', '\\\\.')}"]`)
}

async function setGraphiqlQuery(page: Page, query: string) {
  // GraphiQL 4 edits with CodeMirror 5, whose instance hangs on its element; its change events update GraphiQL.
  const editor = page.locator('.graphiql-query-editor .CodeMirror')
  await editor.evaluate((element, text) => {
    ;(element as unknown as { CodeMirror: { setValue(value: string): void } }).CodeMirror.setValue(text)
  }, query)
}

/** Waits until the GraphiQL page's subscription has reached the service, as one more `created` listener. */
async function untilSubscribed(server: TestServer, path: string, listeners: number) {
  const subscribed = () => server.app.service(path).listenerCount('created') > listeners
  for (let tries = 0; !subscribed() && tries < 200; tries++)
    await new Promise((resolve) => setTimeout(resolve, 25))
  return subscribed()
}

describe('Swagger UI and GraphiQL in a browser, offline', function () {
  this.timeout(120000)
  let server: TestServer
  let browser: Browser

  before(async function () {
    requireChromium(this)
    server = await startServer('sqlite')
    await seedTodoItems(server.db, [
      { title: 'Seen in Swagger UI', priority: 2 },
      { title: 'Seen in GraphiQL' }
    ])
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('Swagger UI renders the TodoItem operations and runs GET /todo-items', async () => {
    const { page, requests, errors } = await openPage(browser)
    await page.goto(`${server.baseUrl}/docs`)
    const operation = (name: string) => swaggerOperation(page, 'TodoItem', `todoItems.${name}`)
    for (const name of [
      'queryMany',
      'createOne',
      'exportMany',
      'findById',
      'updateOne',
      'patchOne',
      'deleteOne'
    ]) {
      await operation(name).waitFor()
    }
    const list = operation('queryMany')
    await list.locator('.opblock-summary').first().click()
    await list.getByRole('button', { name: 'Try it out' }).click()
    await list.getByRole('button', { name: 'Execute' }).click()
    const response = list.locator('.live-responses-table .response')
    await response.waitFor()
    assert.equal((await response.locator('.response-col_status').innerText()).trim(), '200')
    const body = await response.locator('.response-col_description').innerText()
    assert.match(body, /Seen in Swagger UI/)
    assert.match(body, /"totalCount": 2/)
    assert.ok(
      requests.some((url) => url.endsWith('/todo-items?limit=25&offset=0')),
      requests.join('\n')
    )
    assertLocalOnly(requests)
    assert.deepEqual(errors, [])
  })

  it('GraphiQL runs a todoItems query and shows the result', async () => {
    const { page, requests, errors } = await openPage(browser)
    await page.goto(`${server.baseUrl}/graphiql`)
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor()
    await setGraphiqlQuery(
      page,
      '{ todoItems(filter: {title: {like: "%GraphiQL"}}) { totalCount edges { node { title } } } }'
    )
    await page.getByRole('button', { name: /Execute query/ }).click()
    const result = page.locator('.result-window')
    await result.getByText('"totalCount": 1').waitFor()
    assert.match(await result.innerText(), /"title": "Seen in GraphiQL"/)
    assertLocalOnly(requests)
    assert.deepEqual(errors, [])
  })

  it('GraphiQL runs a mutation, and a subscription over WebSocket that a REST write feeds', async () => {
    const { page, requests, errors } = await openPage(browser)
    const sockets: string[] = []
    page.on('websocket', (socket) => sockets.push(socket.url()))
    await page.goto(`${server.baseUrl}/graphiql`)
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor()
    await setGraphiqlQuery(
      page,
      'mutation { createOneTodoItem(input: { todoItem: { title: "Made in GraphiQL" } }) { title } }'
    )
    await page.getByRole('button', { name: /Execute query/ }).click()
    const result = page.locator('.result-window')
    await result.getByText('"title": "Made in GraphiQL"').waitFor()

    // Feathers' channels listen too: a subscriber is one more listener.
    const listeners = server.app.service('todo-items').listenerCount('created')
    await setGraphiqlQuery(page, 'subscription Watch { createdTodoItem { title } }')
    // GraphiQL parses the edited document a moment after the change; executing before that would send the
    // subscription with the previous document's kind, over HTTP.
    await page.waitForTimeout(1000)
    await page.getByRole('button', { name: /Execute query/ }).click()
    const subscribed = await untilSubscribed(server, 'todo-items', listeners)
    assert.ok(subscribed, `GraphiQL did not subscribe: ${await result.innerText()}`)
    assert.equal((await server.http('POST', '/todo-items', { title: 'Heard in GraphiQL' })).status, 201)
    await result.getByText('"title": "Heard in GraphiQL"').waitFor()
    assert.deepEqual(sockets, [server.baseUrl.replace('http', 'ws') + '/graphql'])
    assertLocalOnly(requests)
    assert.deepEqual(errors, [])
  })

  it('the home page links the REST API, the OpenAPI document, Swagger UI and GraphiQL', async () => {
    const { page, requests } = await openPage(browser)
    await page.goto(`${server.baseUrl}/`)
    const links = await page.locator('a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')))
    for (const href of ['/todo-items', '/openapi.json', '/docs/', '/graphiql/'])
      assert.ok(links.includes(href), href)
    assertLocalOnly(requests)
  })
})

/** The JWT-secured application of the authorization tests, with both pages mounted. */
const securedAppWithPages: AppFactory = async (databaseUrl) => {
  const secured = await createAuthApp(databaseUrl)
  secured.app.use(swaggerUi({ path: '/docs', url: '/openapi.json' }))
  secured.app.use(graphiql({ path: '/graphiql', endpoint: '/graphql' }))
  return secured
}

describe('Swagger UI and GraphiQL in a browser, with JWT authentication', function () {
  this.timeout(120000)
  let server: TestServer
  let browser: Browser
  let token: string

  before(async function () {
    requireChromium(this)
    server = await startServer('sqlite', securedAppWithPages)
    token = await accessToken(server, 'ann')
    const created = await server.http(
      'POST',
      '/todo-items',
      { title: "Ann's, seen in Swagger UI" },
      bearer(token)
    )
    assert.equal(created.status, 201, created.text)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it("Swagger UI's Authorize sends the token: Try it out on a guarded route answers 200", async () => {
    const { page, requests, errors } = await openPage(browser)
    await page.goto(`${server.baseUrl}/docs`)
    const list = swaggerOperation(page, 'TodoItem', 'todoItems.queryMany')
    await list.waitFor()
    // A padlock on the guarded operation; the anonymous call is the 401 the document announces.
    assert.equal(await list.locator('.authorization__btn').count(), 1)
    await list.locator('.opblock-summary').first().click()
    await list.getByRole('button', { name: 'Try it out' }).click()
    await list.getByRole('button', { name: 'Execute' }).click()
    const status = list.locator('.live-responses-table .response .response-col_status')
    await status.waitFor()
    assert.equal((await status.innerText()).trim(), '401')

    await page.locator('.auth-wrapper .btn.authorize').click()
    await page.locator('.modal-ux input#auth-bearer-value').fill(token)
    await page.locator('.modal-ux').getByRole('button', { name: 'Apply credentials' }).click()
    await page.locator('.modal-ux').getByRole('button', { name: 'Close' }).click()
    await list.getByRole('button', { name: 'Execute' }).click()
    await list.locator('.live-responses-table .response .response-col_status', { hasText: '200' }).waitFor()
    const body = await list.locator('.live-responses-table .response .response-col_description').innerText()
    assert.match(body, /Ann's, seen in Swagger UI/)
    assertLocalOnly(requests)
    // The anonymous call's 401 is the only failure the page logs.
    assert.ok(
      errors.every((error) => /401/.test(error)),
      errors.join('\n')
    )
  })

  it("GraphiQL sends the Headers tab's Authorization with its subscriptions, which then hear events", async () => {
    const { page, requests, errors } = await openPage(browser)
    await page.goto(`${server.baseUrl}/graphiql`)
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor()
    await page.getByRole('button', { name: 'Headers' }).click()
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')
    await headers.evaluate(
      (element, text) => {
        ;(element as unknown as { CodeMirror: { setValue(value: string): void } }).CodeMirror.setValue(text)
      },
      JSON.stringify({ Authorization: `Bearer ${token}` })
    )
    const listeners = server.app.service('todo-items').listenerCount('created')
    await setGraphiqlQuery(page, 'subscription Watch { createdTodoItem { title } }')
    await page.waitForTimeout(1000)
    await page.getByRole('button', { name: /Execute query/ }).click()
    const result = page.locator('.result-window')
    assert.ok(
      await untilSubscribed(server, 'todo-items', listeners),
      `GraphiQL did not subscribe: ${await result.innerText()}`
    )
    const created = await server.http('POST', '/todo-items', { title: 'Heard by Ann' }, bearer(token))
    assert.equal(created.status, 201, created.text)
    await result.getByText('"title": "Heard by Ann"').waitFor()
    assertLocalOnly(requests)
    assert.deepEqual(errors, [])
  })
})
