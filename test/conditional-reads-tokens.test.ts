import assert from 'node:assert/strict'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { forEachDatabase } from './support/server'

/**
 * The validator hashes the request's headers, Authorization's exact text among them: a tag given to one token
 * confirms nothing to any other text, so a token that fails verification is refused by the hooks (401), never
 * answered 304 before them.
 */
forEachDatabase(
  'Conditional reads: a matching tag with an invalid token or a wrong Authorization',
  (env) => {
    const read = async (path: string, headers: Record<string, string>) => {
      const response = await fetch(env.server.baseUrl + path, { headers })
      return { status: response.status, etag: response.headers.get('etag'), text: await response.text() }
    }

    it('a forged or malformed token that is not expired gets a 401 with the tag of a valid one', async () => {
      const token = await accessToken(env.server, 'ann')
      const first = await read('/todo-items', bearer(token))
      assert.equal(first.status, 200)
      const [header, payload] = token.split('.')
      for (const authorization of [
        `Bearer ${header}.${payload}.forged`,
        'Bearer nope',
        'Basic YW5uOmFubg=='
      ]) {
        const refused = await read('/todo-items', { authorization, 'if-none-match': first.etag! })
        assert.deepEqual([refused.status, refused.etag], [401, null], authorization)
      }
    })

    it('a wrong Authorization on a resource anyone reads gets a 200 of its own, not the 304 of the tag', async () => {
      const anonymous = await read('/announcements', {})
      assert.equal(anonymous.status, 200)
      const wrong = await read('/announcements', {
        authorization: 'Bearer nope',
        'if-none-match': anonymous.etag!
      })
      assert.equal(wrong.status, 200)
      assert.notEqual(wrong.etag, anonymous.etag)
    })
  },
  createAuthApp
)
