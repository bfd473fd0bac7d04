import { STATUS_CODES } from 'node:http'
import { GraphQLError } from 'graphql'
import { parseRequestParams, type Request, type RequestParams, type Response } from 'graphql-http'
import { graphqlErrorBody } from './error-codes'
import { NOT_REGISTERED, sha256, type TrustedDocuments } from './trusted-documents'

/** What a request names: a registered document's id, an Automatic Persisted Query's hash, a document. */
interface Named {
  documentId?: unknown
  hash?: unknown
  query?: unknown
}

/**
 * graphql-http's reading of a request's parameters, with documents known by id: `documentId` (graphql-codegen's
 * persisted documents) and `extensions.persistedQuery.sha256Hash` (Apollo's Automatic Persisted Queries), in a
 * POST's JSON body or a GET's query string. The document found takes the place of `query`, and graphql-http
 * goes on as if the client had sent it (a mutation over GET is refused as ever). Enforced, a document that is
 * not registered is refused before it is parsed.
 */
export function persistedRequestParams<Raw, Context>(
  trusted: TrustedDocuments,
  log: (error: unknown) => void
) {
  // The application's lookup failing (its store unreachable) is the server's failure: logged, its message
  // (which may name hosts) kept from the client. A document it found that cannot run answers its errors.
  const find = async (id: string) => {
    try {
      return { text: await trusted.find(id) }
    } catch (error) {
      if (error instanceof GraphQLError) throw error
      log(error)
      return { failed: refuse(500, 'Internal server error', 'INTERNAL_SERVER_ERROR') }
    }
  }

  return async (request: Request<Raw, Context>): Promise<RequestParams | Response> => {
    // The body is read once, here, and handed on read.
    const body = typeof request.body === 'function' ? await request.body() : request.body
    const read: Request<Raw, Context> = { ...request, body }
    const named = request.method === 'GET' ? namedInUrl(request.url) : namedInBody(body)
    if (!named) return parseRequestParams(read)
    const { documentId, hash, query } = named
    if (documentId !== undefined && documentId !== null) {
      if (typeof documentId !== 'string') return refuse(400, 'documentId must be a string', 'BAD_REQUEST')
      if (query !== undefined && query !== null)
        return refuse(400, 'Send a documentId or a query, not both', 'BAD_REQUEST')
      const { text, failed } = await find(documentId)
      if (failed) return failed
      if (text === undefined)
        return refuse(400, `No document is registered as "${documentId}"`, 'PERSISTED_QUERY_NOT_FOUND')
      return parseRequestParams(withQuery(read, text))
    }
    if (hash !== undefined && hash !== null) {
      if (typeof hash !== 'string')
        return refuse(400, 'extensions.persistedQuery.sha256Hash must be a string', 'BAD_REQUEST')
      if (typeof query !== 'string') {
        const { text, failed } = await find(hash)
        if (failed) return failed
        // Apollo's clients answer this one by sending the document with its hash: a 200, as they expect.
        if (text === undefined) return refuse(200, 'PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND')
        return parseRequestParams(withQuery(read, text))
      }
      if (sha256(query) !== hash.toLowerCase())
        return refuse(400, 'provided sha does not match query', 'PERSISTED_QUERY_HASH_MISMATCH')
      if (!trusted.enforced) trusted.store(hash, query)
    }
    if (trusted.enforced && typeof query === 'string' && !trusted.trusts(query))
      return refuse(400, NOT_REGISTERED, 'PERSISTED_QUERY_REQUIRED')
    return parseRequestParams(read)
  }
}

/** The GraphQL refusal graphql-http answers as it is. */
function refuse(status: number, message: string, code: string): Response {
  return [
    JSON.stringify(graphqlErrorBody(message, { code })),
    {
      status,
      statusText: STATUS_CODES[status] ?? '',
      headers: { 'content-type': 'application/json; charset=utf-8' }
    }
  ]
}

function persistedHash(extensions: unknown) {
  const persisted = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | null)?.persistedQuery
  return typeof persisted === 'object' && persisted !== null ? persisted.sha256Hash : undefined
}

function namedInBody(body: unknown): Named | undefined {
  let data = body
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data)
    } catch {
      return undefined
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined
  const { documentId, extensions, query } = data as Record<string, unknown>
  return { documentId, hash: persistedHash(extensions), query }
}

function namedInUrl(url: string): Named | undefined {
  const search = new URLSearchParams(url.split('?')[1] ?? '')
  let extensions: unknown
  try {
    extensions = JSON.parse(search.get('extensions') ?? 'null')
  } catch {
    // graphql-http refuses it.
    return undefined
  }
  return { documentId: search.get('documentId'), hash: persistedHash(extensions), query: search.get('query') }
}

/** The request with `text` as its document, in its query string (GET) or its body (POST). */
function withQuery<Raw, Context>(request: Request<Raw, Context>, text: string): Request<Raw, Context> {
  if (request.method === 'GET') {
    const [path, search] = request.url.split('?')
    const params = new URLSearchParams(search ?? '')
    params.set('query', text)
    return { ...request, url: `${path}?${params}` }
  }
  let data = request.body as unknown
  if (typeof data === 'string') data = JSON.parse(data)
  return { ...request, body: { ...(data as object), query: text } as Request<Raw, Context>['body'] }
}
