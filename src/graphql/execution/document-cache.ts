import {
  TokenKind,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type Token,
  type ValidationRule
} from 'graphql'

/**
 * What a cached document keeps alive per token beyond its text: the token itself, its AST node, the
 * validation result and graphql-jit's compiled function (docs/design-notes.md, "The document cache").
 * Comments are tokens too, but keep nothing but their text.
 */
const BYTES_PER_TOKEN = 1000

/** About how much memory keeping `document` (parsed from `source`) costs. */
function estimatedBytes(source: string, document: DocumentNode) {
  let tokens = 0
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) {
    if (token.kind !== TokenKind.COMMENT) tokens++
  }
  return source.length + tokens * BYTES_PER_TOKEN
}

/**
 * Clients send the same few documents over and over; parsing and validating each one again costs more than
 * executing a small query. Parsed documents are kept per source text, at most `maxBytes` of them by their
 * estimated size (oldest dropped first; a larger one is not kept at all), and validation results per parsed
 * document, which the same rules always judge the same way. The bound is in bytes, not entries: a document
 * of comments keeps its whole text, one of 10,000 tokens about 10 MB.
 */
export function documentCache(
  parse: (source: string) => DocumentNode,
  validate: (
    schema: GraphQLSchema,
    document: DocumentNode,
    rules?: readonly ValidationRule[]
  ) => readonly GraphQLError[],
  maxBytes: number
) {
  const parsed = new Map<string, { document: DocumentNode; bytes: number }>()
  let keptBytes = 0
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>()
  return {
    parse(source: string) {
      const cached = parsed.get(source)
      if (cached) return cached.document
      const document = parse(source)
      const bytes = estimatedBytes(source, document)
      if (bytes <= maxBytes) {
        for (const [oldest, entry] of parsed) {
          if (keptBytes + bytes <= maxBytes) break
          parsed.delete(oldest)
          keptBytes -= entry.bytes
        }
        parsed.set(source, { document, bytes })
        keptBytes += bytes
      }
      return document
    },
    validate(schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]) {
      let errors = validated.get(document)
      if (!errors) {
        errors = validate(schema, document, rules)
        validated.set(document, errors)
      }
      return [...errors]
    }
  }
}
