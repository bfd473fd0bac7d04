import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startServer, type TestServer } from './support/server'
import { clearTables } from './support/seed'
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './support/chromium'

const ROWS = 3000
const CSV =
  'title,description,completed,priority\n' +
  Array.from({ length: ROWS }, (_, index) => `"Imported ${index}, from the page",,false,${index % 4}`).join(
    '\n'
  ) +
  '\n'

/**
 * A proxy in front of the example app that breaks the first import upload it passes: after `cutAfter` bytes
 * of the request body reached the server, both connections are destroyed, as a dropped network would.
 */
async function cuttingProxy(target: string, cutAfter: number, beforeCut: () => Promise<void>) {
  const imports: string[] = []
  const server = http.createServer((request, response) => {
    const importing = request.method === 'POST' && /\/import(\?|$)/.test(request.url ?? '')
    if (importing) imports.push(request.url!)
    const upstream = http.request(
      target + request.url,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }
    )
    upstream.on('error', () => response.destroy())
    if (!importing || imports.length > 1) return void request.pipe(upstream)
    let sent = 0
    request.on('data', (chunk: Buffer) => {
      if (sent >= cutAfter) return
      upstream.write(chunk.subarray(0, cutAfter - sent))
      sent += chunk.length
      if (sent >= cutAfter) {
        // Give the server the part, then drop both sides.
        void beforeCut().finally(() => {
          upstream.destroy()
          request.socket.destroy()
        })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    imports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Chooses `text` as the file of the import form, for `resource`, and submits: the statuses shown, the last. */
async function importFromHomePage(page: Page, resource: string, text: string, name = 'items.csv') {
  const form = page.locator('form[data-import]')
  await form.locator('select[name=resource]').selectOption(resource)
  await form
    .locator('input[name=file]')
    .setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) })
  const statuses: string[] = []
  await page.exposeFunction('statusShown', (status: string) => statuses.push(status))
  await page.evaluate(() => {
    // The test's tsconfig has no DOM types: the page's own objects, by name.
    const page = globalThis as unknown as {
      document: { querySelector(selector: string): { textContent: string } }
      MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void }
      statusShown(status: string): void
    }
    const status = page.document.querySelector('form[data-import] .status')
    new page.MutationObserver(() => page.statusShown(status.textContent)).observe(status, {
      childList: true,
      characterData: true,
      subtree: true
    })
  })
  await form.getByRole('button', { name: 'Import' }).click()
  const status = form.locator('.status')
  await status.filter({ hasText: /^(Done|Import failed)/ }).waitFor({ timeout: 60000 })
  const bar = form.locator('progress')
  return {
    statuses,
    status: await status.innerText(),
    value: Number(await bar.getAttribute('value')),
    max: Number(await bar.getAttribute('max')),
    errors: await form.locator('.errors li').allInnerTexts()
  }
}

describe('Home page: import with a progress bar, resumed after a cut, in Chromium', function () {
  this.timeout(120000)
  let server: TestServer
  let browser: Browser

  before(async function () {
    requireChromium(this)
    server = await startServer('sqlite')
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  beforeEach(() => clearTables(server.db))

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  const titles = async () =>
    (await server.db('todo_items').select('title')).map((row: { title: string }) => row.title)

  it('imports a file, showing the server’s progress, its bar full at the end', async () => {
    const errors: string[] = []
    const page = await (await browser.newContext()).newPage()
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${server.baseUrl}/`)
    const done = await importFromHomePage(page, 'todo-items', CSV)
    assert.equal(
      done.status,
      `Done: ${ROWS.toLocaleString('en-US')} lines, ${ROWS.toLocaleString('en-US')} imported`
    )
    assert.ok(
      done.statuses.some((status) => /lines read/.test(status)),
      `progress shown before the end: ${done.statuses.join(' | ')}`
    )
    assert.equal(done.value, done.max)
    assert.equal((await titles()).length, ROWS)
    assert.deepEqual(errors, [])
  })

  it('sends a dropped upload again under its key: every line once, no duplicate, no gap', async () => {
    // Cut once the server has committed a batch of the part it got.
    const proxy = await cuttingProxy(server.baseUrl, 40_000, async () => {
      for (let tries = 0; tries < 500 && (await titles()).length === 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })
    try {
      const page = await (await browser.newContext()).newPage()
      await page.goto(`${proxy.origin}/`)
      const done = await importFromHomePage(page, 'todo-items', CSV)
      // The upload was sent twice (by the page, or by Chromium itself, which sends a request again when its
      // connection broke before any answer): the second skipped what the first committed.
      assert.match(done.status, /^Done: 3,000 lines, [\d,]+ imported, [\d,]+ already in/)
      assert.equal(proxy.imports.length, 2)
      const stored = await titles()
      assert.equal(stored.length, ROWS)
      assert.equal(new Set(stored).size, ROWS)
    } finally {
      await proxy.close()
    }
  })

  it('lists the lines it refused, and upserts tags by name when sent again', async () => {
    const page = await (await browser.newContext()).newPage()
    await page.goto(`${server.baseUrl}/`)
    const bad = await importFromHomePage(
      page,
      'todo-items',
      'title,description,completed,priority\n"ok",,false,1\n"bad",,false,high\n'
    )
    assert.equal(bad.status, 'Done: 2 lines, 1 imported, 1 failed')
    assert.equal(bad.errors.length, 1)
    assert.match(bad.errors[0], /^line 3, priority: /)
    const other = await (await browser.newContext()).newPage()
    await other.goto(`${server.baseUrl}/`)
    await importFromHomePage(other, 'tags', 'name\nred\nblue\n', 'tags.csv')
    const third = await (await browser.newContext()).newPage()
    await third.goto(`${server.baseUrl}/`)
    const again = await importFromHomePage(third, 'tags', 'name\nred\nblue\ngreen\n', 'tags.csv')
    assert.equal(again.status, 'Done: 3 lines, 3 imported')
    const names = (await server.db('tags').select('name').orderBy('name')).map(
      (row: { name: string }) => row.name
    )
    assert.deepEqual(names, ['blue', 'green', 'red'])
  })
})
