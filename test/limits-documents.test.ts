import assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { codes, graphql } from './support/graphql'

/** A valid query padded with comment lines to about `bytes` (comments are no tokens to maxTokens). */
function padded(bytes: number, tag = '', filler = 'x') {
  const line = `# ${tag} ${filler.repeat(98)}\n`
  return line.repeat(Math.ceil(bytes / Buffer.byteLength(line))) + '{ todoItems { totalCount } }'
}

forEachDatabase('Limits: size of a document', (env) => {
  it('refuses a document over 100,000 bytes before parsing it, counting bytes, not characters', async () => {
    const within = await graphql(env.server, padded(90_000))
    assert.equal(within.errors, undefined, JSON.stringify(within.errors))
    const euros = padded(101_000, '', '€')
    assert.ok(euros.length < 100_000, 'fewer characters than the limit, more bytes')
    for (const document of [padded(150_000), euros]) {
      assert.ok(Buffer.byteLength(document) > 100_000)
      const response: any = await graphql(env.server, document)
      assert.deepEqual(codes(response), ['QUERY_TOO_LARGE'])
      assert.equal(response.errors[0].extensions.maxBytes, 100_000)
      assert.match(response.errors[0].message, /larger than 100000 bytes/)
    }
  })
})

/** The live JS heap after a full collection. */
function liveHeap() {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  return process.memoryUsage().heapUsed
}

forEachDatabase(
  'Limits: memory of the document cache (documentCacheBytes 2 MB)',
  (env) => {
    it('keeps no more parsed documents than its byte budget, however many arrive', async function () {
      this.timeout(60000)
      await graphql(env.server, padded(500_000, 'warm-up'))
      const before = liveHeap()
      for (let index = 0; index < 40; index++) {
        const response = await graphql(env.server, padded(500_000, String(index)))
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      }
      const grown = (liveHeap() - before) / 2 ** 20
      // Kept by entries, the 40 documents of 500 KB held 20 MB.
      assert.ok(grown < 8, `the heap grew by ${grown.toFixed(1)} MB`)
    })
  },
  exampleResourcesApp({ graphql: { limits: { maxDocumentBytes: 1_000_000, documentCacheBytes: 2_000_000 } } })
)
