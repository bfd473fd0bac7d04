import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql'

/**
 * Clients send the same few documents over and over; parsing and validating each one again costs more than
 * executing a small query. Parsed documents are kept per source text (at most `size`, oldest dropped first),
 * and validation results per parsed document, which the same rules always judge the same way.
 */
export function documentCache(
  parse: (source: string) => DocumentNode,
  validate: (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]) => readonly GraphQLError[],
  size = 500
) {
  const parsed = new Map<string, DocumentNode>()
  const validated = new WeakMap<DocumentNode, readonly GraphQLError[]>()
  return {
    parse(source: string) {
      let document = parsed.get(source)
      if (!document) {
        document = parse(source)
        if (parsed.size >= size) parsed.delete(parsed.keys().next().value as string)
        parsed.set(source, document)
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
