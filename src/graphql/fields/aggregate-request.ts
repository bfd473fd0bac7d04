import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo
} from 'graphql'
// The executor's own field collection: fragments, inline fragments, @skip/@include and aliases are read
// exactly as graphql-js reads them when it resolves the response.
import { collectSubfields } from 'graphql/execution/collectFields'
import { badInput, type FieldError } from '../../common/errors'
import {
  AGGREGATE_FUNCTIONS,
  type AggregateFunction,
  type AggregateRequest,
  type DateBucket,
  type GroupByField,
  type GroupFill
} from '../../model/aggregate'

type Member = 'groupBy' | 'percentile' | AggregateFunction

const MEMBERS = new Set<string>(['groupBy', 'percentile', ...AGGREGATE_FUNCTIONS])
const SERIES = new Set<string>(['running', 'previous', 'periodAgo'])

/** `running { count { id } }`, `previous {...}`, `periodAgo(period: YEAR) {...}`: their lists, one period per query. */
function addSeries(
  info: GraphQLResolveInfo,
  responseType: GraphQLObjectType,
  memberNodes: readonly FieldNode[],
  request: Omit<AggregateRequest, 'partitionBy'>,
  errors: FieldError[]
) {
  const member = memberNodes[0].name.value as 'running' | 'previous' | 'periodAgo'
  const fieldDef = responseType.getFields()[member]
  const seriesType = getNamedType(fieldDef.type) as GraphQLObjectType
  const selection = (request[member] ??= {} as never) as Record<string, unknown>
  if (member === 'periodAgo') {
    for (const node of memberNodes) {
      const { period } = getArgumentValues(fieldDef, node, info.variableValues)
      if (selection.period !== undefined && selection.period !== period) {
        errors.push({ field: 'periodAgo.period', message: 'compares one period per query' })
      }
      selection.period = period
    }
  }
  for (const fnNodes of selected(info, seriesType, memberNodes)) {
    const fn = fnNodes[0].name.value
    const fnType = getNamedType(seriesType.getFields()[fn].type) as GraphQLObjectType
    const list = (selection[fn] ??= []) as string[]
    for (const fieldNodes of selected(info, fnType, fnNodes)) {
      const field = fieldNodes[0].name.value
      if (!list.includes(field)) list.push(field)
    }
  }
}

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
  } else if (JSON.stringify(existing) !== JSON.stringify(entry)) {
    const what = (group: GroupByField) =>
      [group.by, group.timeZone, group.fill && 'fill'].filter(Boolean).join(' ')
    errors.push({
      field: `groupBy.${entry.field}`,
      message: `is selected as ${what(existing)} and as ${what(entry)}; group a field one way per query`
    })
  }
}

/** A date group's arguments as the request's entry: `by`, `timeZone` and `fill` where given. */
function groupEntry(field: string, args: Record<string, unknown>): GroupByField {
  const entry: GroupByField = { field }
  if (args.by) entry.by = args.by as DateBucket
  if (args.timeZone !== undefined && args.timeZone !== null && args.timeZone !== 'UTC') {
    entry.timeZone = args.timeZone as string
  }
  if (args.fill) entry.fill = { ...(args.fill as GroupFill) }
  return entry
}

/**
 * The group keys a field selected under `groupBy` asks for: the field, or below a to-one relation
 * (`todoItem { completed }`) each field selected in it, named by its dotted path (`todoItem.completed`).
 */
function addGroupKeys(
  info: GraphQLResolveInfo,
  definition: GraphQLField<unknown, unknown>,
  nodes: readonly FieldNode[],
  name: string,
  groups: GroupByField[],
  errors: FieldError[]
) {
  const type = getNamedType(definition.type)
  if (!isObjectType(type)) {
    const args = getArgumentValues(definition, nodes[0], info.variableValues)
    return addGroup(groups, groupEntry(name, args), errors)
  }
  const fields = type.getFields()
  for (const inner of selected(info, type, nodes)) {
    const field = inner[0].name.value
    addGroupKeys(info, fields[field], inner, `${name}.${field}`, groups, errors)
  }
}

/**
 * The aggregate request a selection asks for: each field selected under `groupBy`, `count`, `sum`, `avg`,
 * `min`, `max` (through aliases and fragments), so that only what the client reads is computed. Group keys
 * keep the order of the selection, which is the order of the groups.
 */
export function aggregateRequestOf(info: GraphQLResolveInfo): Omit<AggregateRequest, 'partitionBy'> {
  let responseType = getNamedType(info.returnType)
  if (!isObjectType(responseType)) throw new Error(`${info.fieldName} does not return an aggregate response`)
  let nodes: readonly FieldNode[] = info.fieldNodes
  // A page of groups (`<singular>AggregateGroups`): the responses are its `nodes`.
  const page = responseType.getFields().nodes
  if (page) {
    nodes = selected(info, responseType, nodes)
      .filter((group) => group[0].name.value === 'nodes')
      .flat()
    responseType = getNamedType(page.type) as GraphQLObjectType
  }
  const request: Omit<AggregateRequest, 'partitionBy'> = {}
  const errors: FieldError[] = []
  for (const memberNodes of nodes.length ? selected(info, responseType, nodes) : []) {
    const member = memberNodes[0].name.value as Member
    if (SERIES.has(member)) {
      addSeries(info, responseType, memberNodes, request, errors)
      continue
    }
    if (!MEMBERS.has(member)) continue
    const memberType = getNamedType(responseType.getFields()[member].type) as GraphQLObjectType
    const fieldDefs = memberType.getFields()
    if (member === 'percentile') {
      // Each alias its own p (`p95: percentile(p: 0.95)`); aliases of one p share an entry.
      const { p } = getArgumentValues(
        responseType.getFields().percentile,
        memberNodes[0],
        info.variableValues
      )
      let entry = request.percentile?.find((candidate) => candidate.p === p)
      if (!entry) (request.percentile ??= []).push((entry = { p: p as number, fields: [] }))
      for (const fieldNodes of selected(info, memberType, memberNodes)) {
        if (!entry.fields.includes(fieldNodes[0].name.value)) entry.fields.push(fieldNodes[0].name.value)
      }
      continue
    }
    for (const fieldNodes of selected(info, memberType, memberNodes)) {
      const field = fieldNodes[0].name.value
      if (member !== 'groupBy') {
        const list = (request[member] ??= [])
        if (!list.includes(field)) list.push(field)
        continue
      }
      addGroupKeys(info, fieldDefs[field], fieldNodes, field, (request.groupBy ??= []), errors)
    }
  }
  if (errors.length) throw badInput(errors)
  return request
}

/** Whether the field's selection (fragments included) asks for `member`, e.g. a page's `totalCount`. */
export function selectsMember(info: GraphQLResolveInfo, member: string) {
  const type = getNamedType(info.returnType)
  if (!isObjectType(type)) return false
  return selected(info, type, info.fieldNodes).some((group) => group[0].name.value === member)
}
