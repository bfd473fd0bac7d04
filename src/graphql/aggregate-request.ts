import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLResolveInfo
} from 'graphql'
// The executor's own field collection: fragments, inline fragments, @skip/@include and aliases are read
// exactly as graphql-js reads them when it resolves the response.
import { collectSubfields } from 'graphql/execution/collectFields'
import { badInput, type FieldError } from '../errors'
import {
  AGGREGATE_FUNCTIONS,
  type AggregateFunction,
  type AggregateRequest,
  type DateBucket,
  type GroupByField
} from '../query/model'

type Member = 'groupBy' | AggregateFunction

const MEMBERS = new Set<string>(['groupBy', ...AGGREGATE_FUNCTIONS])

/** The fields selected below `nodes` on `type`, by response key (alias or name); `__typename` left out. */
function selected(info: GraphQLResolveInfo, type: GraphQLObjectType, nodes: readonly FieldNode[]) {
  const fields = collectSubfields(info.schema, info.fragments, info.variableValues, type, nodes)
  return [...fields.values()].filter((group) => group[0].name.value !== '__typename')
}

/**
 * A date selected twice with different buckets (`week: created(by: WEEK) month: created(by: MONTH)`) cannot
 * be answered: a response carries one `groupBy.created`, which both aliases would read.
 */
function addGroup(groups: GroupByField[], entry: GroupByField, errors: FieldError[]) {
  const existing = groups.find((group) => group.field === entry.field)
  if (!existing) {
    groups.push(entry)
  } else if (existing.by !== entry.by) {
    errors.push({
      field: `groupBy.${entry.field}`,
      message: `is selected with the buckets ${existing.by} and ${entry.by}; group a field by one bucket per query`
    })
  }
}

/**
 * The aggregate request a selection asks for: each field selected under `groupBy`, `count`, `sum`, `avg`,
 * `min`, `max` (through aliases and fragments), so that only what the client reads is computed. Group keys
 * keep the order of the selection, which is the order of the groups.
 */
export function aggregateRequestOf(info: GraphQLResolveInfo): Omit<AggregateRequest, 'partitionBy'> {
  const responseType = getNamedType(info.returnType)
  if (!isObjectType(responseType)) throw new Error(`${info.fieldName} does not return an aggregate response`)
  const request: Omit<AggregateRequest, 'partitionBy'> = {}
  const errors: FieldError[] = []
  for (const memberNodes of selected(info, responseType, info.fieldNodes)) {
    const member = memberNodes[0].name.value as Member
    if (!MEMBERS.has(member)) continue
    const memberType = getNamedType(responseType.getFields()[member].type) as GraphQLObjectType
    const fieldDefs = memberType.getFields()
    for (const nodes of selected(info, memberType, memberNodes)) {
      const field = nodes[0].name.value
      if (member !== 'groupBy') {
        const list = (request[member] ??= [])
        if (!list.includes(field)) list.push(field)
        continue
      }
      const args = getArgumentValues(fieldDefs[field], nodes[0], info.variableValues)
      const by = (args.by ?? undefined) as DateBucket | undefined
      addGroup((request.groupBy ??= []), by ? { field, by } : { field }, errors)
    }
  }
  if (errors.length) throw badInput(errors)
  return request
}
