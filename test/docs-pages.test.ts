import assert from 'node:assert/strict'
import { serverOn } from './support/server'

/**
 * The example's /docs (Swagger UI) and /graphiql pages over plain HTTP, with no browser: what the page
 * loads, that all of it is served from here, and the Content-Security-Policy that keeps a browser on this
 * server. test/browser-docs.test.ts runs the pages in Chromium; this runs wherever the suite does.
 */
const PAGES = [
  { path: '/docs', data: '/openapi.json', dataType: 'application/json' },
  { path: '/graphiql', data: '/graphql', dataType: undefined }
]

/** The policy's directives by name, each with its sources. */
function directives(policy: string) {
  return Object.fromEntries(
    policy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name, sources])
  )
}

/** The scripts and stylesheets a page loads, as written in it (data: URLs load nothing). */
function references(html: string) {
  return [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]*)"/g)]
    .map((match) => match[1])
    .filter((url) => !url.startsWith('data:'))
}

describe('Swagger UI and GraphiQL pages over HTTP, without a browser', function () {
  const env = serverOn('sqlite')

  for (const page of PAGES) {
    it(`serves ${page.path} with a same-origin policy and only assets of its own`, async () => {
      const bare = await fetch(env.server.baseUrl + page.path, { redirect: 'manual' })
      assert.equal(bare.status, 302)
      assert.equal(bare.headers.get('location'), `${page.path}/`)

      const response = await env.server.http('GET', `${page.path}/`)
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/)
      const policy = directives(response.headers.get('content-security-policy') ?? '')
      assert.deepEqual(policy['default-src'], ["'self'"])
      assert.deepEqual(policy['script-src'], ["'self'"], 'no inline scripts, no other hosts')
      assert.deepEqual(policy['connect-src'], ["'self'"])
      assert.deepEqual(policy['object-src'], ["'none'"])
      for (const name of ['style-src', 'img-src', 'font-src']) {
        assert.ok(policy[name]?.includes("'self'"), name)
        assert.ok(
          !policy[name].some((source: string) => /^https?:|^\*/.test(source)),
          `${name}: no other hosts`
        )
      }

      // Everything the page loads is relative, so it stays on this env.server, and is served.
      const html = response.text
      assert.doesNotMatch(html, /(?:src|href)="(?:https?:)?\/\//, 'no absolute URLs in the page')
      assert.doesNotMatch(html, /<script>/, 'no inline scripts, which the policy would block')
      const loaded = references(html)
      assert.ok(loaded.some((url) => url.endsWith('.js')) && loaded.some((url) => url.endsWith('.css')))
      for (const url of loaded) {
        const asset = await fetch(new URL(url, `${env.server.baseUrl}${page.path}/`))
        const body = await asset.text()
        assert.equal(asset.status, 200, url)
        assert.match(
          asset.headers.get('content-type') ?? '',
          url.endsWith('.css') ? /text\/css/ : /javascript/,
          url
        )
        assert.ok(body.length > 0, `${url} is empty`)
        assert.equal(asset.headers.get('content-security-policy'), null, `${url}: the policy is the page's`)
      }

      // The page's own script points at this server's endpoint, which answers.
      const init = loaded.find((url) => /init/.test(url))!
      assert.match(
        await (await fetch(new URL(init, `${env.server.baseUrl}${page.path}/`))).text(),
        new RegExp(page.data)
      )
      if (page.dataType) {
        const data = await env.server.http('GET', page.data)
        assert.equal(data.status, 200)
        assert.match(data.headers.get('content-type') ?? '', new RegExp(page.dataType))
      }

      // Only the named assets: nothing else of the packages' directories.
      for (const other of ['package.json', '..%2Fpackage.json', 'index.js', 'README.md']) {
        assert.equal((await env.server.http('GET', `${page.path}/${other}`)).status, 404, other)
      }
    })
  }
})
