import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startServer, type TestServer } from './support/server'
import { seedTodoItems } from './support/seed'
import { parseCsv } from './support/csv'
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './support/chromium'

const ROWS = 3000

/**
 * A proxy in front of the example app that breaks the first export download it passes: after `cutAfter`
 * bytes of the body the connection is destroyed, as a dropped network would. Everything else passes whole.
 */
async function cuttingProxy(target: string, cutAfter: number) {
  let cuts = 0
  const exports: string[] = []
  const server = http.createServer((request, response) => {
    const upstream = http.request(
      target + request.url,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        const cutting = /\/export\?/.test(request.url ?? '') && cuts === 0
        if (/\/export\?/.test(request.url ?? '')) exports.push(request.url!)
        if (!cutting) return answer.pipe(response)
        cuts++
        let sent = 0
        answer.on('data', (chunk: Buffer) => {
          if (sent >= cutAfter) return
          response.write(chunk.subarray(0, cutAfter - sent))
          sent += chunk.length
          if (sent >= cutAfter) {
            answer.destroy()
            // Flushed first, so the browser holds the rows before the cut, then the connection drops.
            setTimeout(() => response.socket?.destroy(), 50)
          }
        })
      }
    )
    request.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The records of a CSV without `age` (milliseconds since created, which moves between two reads). */
function withoutAge(text: string) {
  const { header, records } = parseCsv(text)
  return { header, records: records.map(({ age: _age, ...record }) => record) }
}

/** Clicks a resource's export button and waits for its file: the status line, the bar and the file's text. */
async function exportFromHomePage(page: Page, path: string) {
  const section = page.locator(`[data-export="${path}"]`)
  await section.getByRole('button').click()
  const link = section.locator('a.download')
  await link.waitFor({ state: 'visible', timeout: 60000 })
  const bar = section.locator('progress')
  return {
    status: await section.locator('.status').innerText(),
    value: Number(await bar.getAttribute('value')),
    max: Number(await bar.getAttribute('max')),
    download: await link.getAttribute('download'),
    file: await link.evaluate(async (anchor) => {
      // The page's object URL of the file, read in the page (the test's tsconfig has no DOM types).
      const { href } = anchor as unknown as { href: string }
      return (await fetch(href)).text()
    })
  }
}

describe('Home page: export with a progress bar, resumed after a cut, in Chromium', function () {
  this.timeout(120000)
  let server: TestServer
  let browser: Browser

  before(async function () {
    requireChromium(this)
    server = await startServer('sqlite')
    await seedTodoItems(
      server.db,
      Array.from({ length: ROWS }, (_, index) => ({ title: `Item "${index}", quoted`, priority: index % 4 }))
    )
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  })

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('downloads the whole export, without the token column, its bar full, across a dropped connection', async () => {
    const proxy = await cuttingProxy(server.baseUrl, 100_000)
    const errors: string[] = []
    try {
      const page = await (await browser.newContext()).newPage()
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(`${proxy.origin}/`)
      const done = await exportFromHomePage(page, 'todo-items')
      assert.equal(
        done.status,
        `${ROWS.toLocaleString('en-US')} of ${ROWS.toLocaleString('en-US')} rows (resumed 1×)`
      )
      assert.equal(done.value, ROWS)
      assert.equal(done.max, ROWS)
      assert.equal(done.download, 'todo-items.csv')
      // The first request was cut; the second resumed after the last complete row the page held.
      assert.equal(proxy.exports.length, 2, proxy.exports.join('\n'))
      assert.match(proxy.exports[1], /after=eyJ/)
      const whole = await server.http('GET', '/todo-items/export')
      assert.deepEqual(withoutAge(done.file), withoutAge(whole.text))
      assert.deepEqual(errors, [])
    } finally {
      await proxy.close()
    }
  })

  it('an export with no rows ends at once, with an empty bar and a file of the header row', async () => {
    const page = await (await browser.newContext()).newPage()
    await page.goto(`${server.baseUrl}/`)
    const done = await exportFromHomePage(page, 'sub-tasks')
    assert.equal(done.status, '0 of 0 rows')
    assert.equal(done.value, 0)
    const whole = await server.http('GET', '/sub-tasks/export')
    assert.equal(done.file, whole.text)
    // The import form beside it (test/home-page-import.test.ts).
    assert.equal(await page.locator('form[data-import]').count(), 1)
  })
})
