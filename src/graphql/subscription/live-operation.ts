import {
  execute,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  print,
  GraphQLError,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode
} from 'graphql'
import type { Application } from '@feathersjs/koa'
import { copyWith } from '../../common/copy-with'
import { liveQueriesOf } from '../../live/app-live-queries'
import { liveScope } from '../../live/live-scope'
import type { Filter } from '../../model/query'
import type { ResourceParams } from '../../model/records'
import type { ResolvedResource } from '../../resource/resolved'
import { resourceService } from '../../service/resource-service'
import { liveFieldOf } from '../fields/live'
import { eventStream } from './event-stream'
import type { GraphqlContext } from '../fields/context'
import { toFilter } from '../type/filter-input'
import { andFilters } from '../../query/filters'

/** Errors of a computation that refuse its caller rather than answer: never shared with other subscribers. */
const REFUSALS = new Set(['NotAuthenticated', 'Forbidden'])

const ownCode = (error: unknown) => {
  const code = (error as { data?: { code?: unknown } } | undefined)?.data?.code
  return typeof code === 'string' ? { code } : undefined
}

const isResult = (value: unknown): value is ExecutionResult =>
  !!value && typeof value === 'object' && Array.isArray((value as ExecutionResult).errors)

/** The fields of a selection, through its fragments (a root field may be written inside one). */
function fieldsOf(selectionSet: SelectionSetNode, document: DocumentNode, fields: FieldNode[] = []) {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) fields.push(selection)
    else if (selection.kind === Kind.INLINE_FRAGMENT) fieldsOf(selection.selectionSet, document, fields)
    else {
      const fragment = document.definitions.find(
        (definition): definition is FragmentDefinitionNode =>
          definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value
      )
      if (fragment) fieldsOf(fragment.selectionSet, document, fields)
    }
  }
  return fields
}

/** The one root field of a live subscription, with its argument values. */
function liveRoot(args: ExecutionArgs, operation: OperationDefinitionNode) {
  const selections = fieldsOf(operation.selectionSet, args.document)
  if (selections.length !== 1) return undefined
  const [selection] = selections
  const field = args.schema.getSubscriptionType()?.getFields()[selection.name.value]
  const live = liveFieldOf(field)
  if (!field || !live) return undefined
  return { field, node: selection, ...live }
}

/** The client's filter of the root field: a created or removed record outside it changes nothing. */
function rootFilter(resource: ResolvedResource, values: Record<string, unknown>): Filter | undefined {
  if (values.id !== undefined) return { [resource.idField.name]: { eq: values.id } } as Filter
  try {
    return toFilter(resource, values.filter)
  } catch {
    return undefined
  }
}

/**
 * The same document with the subscription read as a query of its root field: the live result is the query's
 * result. The field is selected directly, since a fragment it was written in is one on the subscription type.
 */
function asQuery(document: DocumentNode, operation: OperationDefinitionNode, root: FieldNode): DocumentNode {
  const query: OperationDefinitionNode = {
    ...operation,
    operation: OperationTypeNode.QUERY,
    selectionSet: { kind: Kind.SELECTION_SET, selections: [root] }
  }
  return {
    ...document,
    definitions: document.definitions.map((definition) => (definition === operation ? query : definition))
  }
}

export interface LiveOperationOptions {
  app: Application
  /** The connection's params, as every call of the connection carries them. */
  params: ResourceParams
  /** A context for one computation: relation loaders and statement slots of its own. */
  context: () => GraphqlContext
  formatError(error: GraphQLError): GraphQLError
}

/**
 * Serves a subscription to a live field (`subscription { todoItems(...) { ... } }`): the query's result at
 * once, then each new result a write brings, computed once for every subscriber of the same question and
 * scope (see `LiveQueries`). Undefined for any other operation.
 */
export function liveOperation(
  args: ExecutionArgs,
  options: LiveOperationOptions
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> | undefined {
  const operation = getOperationAST(args.document, args.operationName)
  if (operation?.operation !== OperationTypeNode.SUBSCRIPTION) return undefined
  const root = liveRoot(args, operation)
  if (!root) return undefined
  return watch(args, operation, root, options)
}

async function watch(
  args: ExecutionArgs,
  operation: OperationDefinitionNode,
  root: NonNullable<ReturnType<typeof liveRoot>>,
  options: LiveOperationOptions
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const { schema, operationName } = args
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], args.variableValues ?? {})
  if (variables.errors) return { errors: variables.errors.map(options.formatError) }
  const values = getArgumentValues(root.field, root.node, variables.coerced)
  const document = asQuery(args.document, operation, root.node)
  const params = copyWith(options.params, { provider: 'graphql' }) as ResourceParams
  const failed = (error: unknown) => ({
    errors: [
      options.formatError(
        error instanceof GraphQLError
          ? error
          : new GraphQLError((error as Error).message, {
              originalError: error as Error,
              // A refusal of the live queries' own (TOO_MANY_LIVE_QUERIES) keeps its code.
              extensions: ownCode(error)
            })
      )
    ]
  })
  let stop = () => {}
  // A stream of states: the newest result replaces one the client has not read yet.
  const stream = eventStream<ExecutionResult>(1, 'replace', () => stop())
  try {
    const scope = await liveScope(root.resource, params, (resource) => resourceService(options.app, resource))
    const filter = rootFilter(root.resource, values)
    const watching = await liveQueriesOf(options.app).watch<ExecutionResult>({
      question: JSON.stringify([operationName ?? null, args.variableValues ?? null, print(document)]),
      scope: scope.key,
      compute: async () =>
        execute({
          schema,
          document,
          operationName,
          variableValues: args.variableValues,
          contextValue: options.context()
        }),
      text: (result) => JSON.stringify(result),
      deliver: (result) => stream.push(result),
      fail: (error) => stream.finish(isResult(error) ? error : failed(error)),
      refuses: (result) =>
        result.errors?.some((error) => REFUSALS.has(error.originalError?.name ?? '')) ?? false,
      root: {
        resource: root.resource,
        filter: root.method === 'find' ? andFilters(scope.rootScope, filter) : filter
      }
    })
    stop = watching.stop
    if (watching.first.errors && !watching.first.data) {
      stop()
      return watching.first
    }
    stream.push(watching.first)
    return stream.iterator
  } catch (error) {
    stream.end()
    return failed(error)
  }
}
