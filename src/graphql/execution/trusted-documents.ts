import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { GraphQLError, type DocumentNode } from 'graphql'
import { BoundedCache } from '../../common/bounded-cache'
import { ConfigurationError } from '../../common/errors'

/** Where the registered documents come from: a manifest file, the manifest itself, or a lookup by id. */
export type TrustedDocumentSource =
  string | Record<string, string> | ((id: string) => string | undefined | Promise<string | undefined>)

export interface TrustedDocumentsOptions {
  /**
   * The documents clients may run, by id: the path of a JSON manifest (`{ "<id>": "<document>" }`, as
   * graphql-codegen's client preset and Relay write them, or Apollo's `persisted-query-manifest.json`), the same
   * object, or a function that answers the document of an id (asked once per id it knows).
   */
  documents: TrustedDocumentSource
  /**
   * `enforce`: only registered documents run, and Automatic Persisted Queries register nothing new.
   * `allow-any`: any document runs. Default: `enforce` when NODE_ENV is `production`, else `allow-any`.
   */
  mode?: 'enforce' | 'allow-any'
}

/** Why a document that is not registered does not run where only registered ones do. */
export const NOT_REGISTERED = 'Only registered documents run here: send the documentId of one'

export const notRegistered = () =>
  new GraphQLError(NOT_REGISTERED, { extensions: { code: 'PERSISTED_QUERY_REQUIRED' } })

/** The hex SHA-256 of a document's text: its id in Apollo's Automatic Persisted Queries. */
export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A document made ready to run: parsed, validated and costed once. Its errors if it cannot run. */
export type PrepareDocument = (source: string) => { document?: DocumentNode; errors: readonly GraphQLError[] }

/** How many documents Automatic Persisted Queries keep, whatever their size. */
const MAX_AUTOMATIC_DOCUMENTS = 1000

/**
 * The documents the endpoint knows by id: the registered ones, found by their id or their SHA-256, and, unless
 * enforced, those clients registered through Automatic Persisted Queries (bounded, oldest dropped first).
 * Registered documents are parsed and validated once, when registered, and kept parsed: the document cache,
 * which drops what it has no room for, never parses them again.
 */
export class TrustedDocuments {
  private readonly byId = new Map<string, string>()
  private readonly prepared = new Map<string, DocumentNode>()
  private readonly automatic: BoundedCache<string>
  private readonly lookup?: (id: string) => string | undefined | Promise<string | undefined>
  readonly enforced: boolean

  constructor(
    options: TrustedDocumentsOptions | undefined,
    private readonly prepare: PrepareDocument,
    automaticBytes: number
  ) {
    // Without a registry nothing can be enforced, in production or not: every document runs.
    this.enforced = options !== undefined && (options.mode ?? defaultMode()) === 'enforce'
    if (options?.mode !== undefined && options.mode !== 'enforce' && options.mode !== 'allow-any')
      throw new ConfigurationError(`graphql.trustedDocuments.mode must be 'enforce' or 'allow-any'`)
    this.automatic = new BoundedCache(MAX_AUTOMATIC_DOCUMENTS, automaticBytes, (text) => text.length)
    const documents = options?.documents
    if (typeof documents === 'function') this.lookup = documents
    else if (documents !== undefined) {
      const manifest = typeof documents === 'string' ? readManifest(documents) : documents
      for (const [id, text] of Object.entries(manifest)) this.register(id, text)
    }
  }

  /** The parsed document of a registered text, which is never parsed again. */
  parsed(source: string) {
    return this.prepared.get(source)
  }

  /** Whether this text is a registered document. */
  trusts(source: string) {
    return this.prepared.has(source)
  }

  /** The document of an id, registered or (unless enforced) stored by Automatic Persisted Queries. */
  async find(id: string): Promise<string | undefined> {
    const registered = this.byId.get(id) ?? this.byId.get(id.toLowerCase())
    if (registered !== undefined) return registered
    if (this.lookup) {
      const text = await this.lookup(id)
      if (typeof text === 'string') {
        // Asked once per id: a document that cannot run answers its errors, as any other would.
        const { errors } = this.remember(id, text)
        if (errors.length > 0) throw errors[0]
        return text
      }
    }
    return this.enforced ? undefined : this.automatic.peek(id.toLowerCase())
  }

  /** Keeps a document a client registered through Automatic Persisted Queries under its SHA-256. */
  store(hash: string, text: string) {
    this.automatic.get(hash.toLowerCase(), () => text)
  }

  /** Registers a document of the manifest: refused at start-up if it cannot run. */
  private register(id: string, text: unknown) {
    if (typeof text !== 'string')
      throw new ConfigurationError(`graphql.trustedDocuments: the document "${id}" is not a string`)
    const { errors } = this.remember(id, text)
    if (errors.length > 0)
      throw new ConfigurationError(
        `graphql.trustedDocuments: the document "${id}" cannot run: ${errors.map((error) => error.message).join(' ')}`
      )
  }

  /** Prepares a document and, if it can run, knows it by id and by SHA-256 from now on. */
  private remember(id: string, text: string) {
    const { document, errors } = this.prepare(text)
    if (document && errors.length === 0) {
      this.prepared.set(text, document)
      this.byId.set(id, text)
      this.byId.set(sha256(text), text)
    }
    return { errors }
  }
}

function defaultMode() {
  return process.env.NODE_ENV === 'production' ? 'enforce' : 'allow-any'
}

/**
 * A manifest file: an object of documents by id (graphql-codegen's client preset, Relay), or Apollo's
 * persisted query manifest (`{ format: 'apollo-persisted-query-manifest', operations: [{ id, body }] }`).
 */
function readManifest(path: string): Record<string, string> {
  let manifest: unknown
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new ConfigurationError(`graphql.trustedDocuments: cannot read ${path}: ${(error as Error).message}`)
  }
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new ConfigurationError(`graphql.trustedDocuments: ${path} is not a JSON object of documents by id`)
  const apollo = manifest as { format?: unknown; operations?: Array<{ id?: unknown; body?: unknown }> }
  if (apollo.format === 'apollo-persisted-query-manifest' && Array.isArray(apollo.operations))
    return Object.fromEntries(
      apollo.operations.map((operation) => [String(operation.id), operation.body as string])
    )
  return manifest as Record<string, string>
}
