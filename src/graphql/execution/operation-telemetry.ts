import { trace, type Attributes } from '@opentelemetry/api'
import { getOperationAST, type DocumentNode } from 'graphql'
import { tracing } from '../../telemetry/telemetry'
import { measuredOperation } from './limits'

/**
 * Names the request's span after the operation it ran (`graphql TodoItems`, `graphql query` when it has no
 * name) and gives it OpenTelemetry's GraphQL attributes and what the limits measured of it: its cost and
 * the SQL statements it may run at most. The document's text is left out: its literals are the client's values.
 */
export function describeOperation(document: DocumentNode, operationName: string | null | undefined) {
  if (!tracing()) return
  const span = trace.getActiveSpan()
  const operation = getOperationAST(document, operationName)
  if (!span || !operation) return
  const name = operation.name?.value
  const attributes: Attributes = { 'graphql.operation.type': operation.operation }
  if (name) attributes['graphql.operation.name'] = name
  const measured = measuredOperation(operation)
  if (measured) {
    attributes['feathers_query.graphql.cost'] = measured.cost
    attributes['feathers_query.graphql.statements'] = measured.statements
  }
  span.setAttributes(attributes)
  span.updateName(`graphql ${name ?? operation.operation}`)
}
