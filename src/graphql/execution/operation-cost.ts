import {
  Kind,
  getNamedType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  print,
  type FieldNode,
  type GraphQLArgument,
  type GraphQLInputType,
  type ValueNode,
  type OperationDefinitionNode,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationContext
} from 'graphql'
import type { PageSizes } from '../../resource/resolved'
import { workOf } from '../type/field-work'
import { isRelationFilter } from '../type/filter-input'
import { isStatistical, type ColumnFunction } from '../../model/aggregate'

/**
 * What a field of a statistical aggregate costs, in fields: a median or percentile ranks the values of each group (a sort),
 * a deviation or variance reads them twice (their mean first, from a window over the rows on SQLite and
 * MariaDB).
 */
const STATISTIC_WEIGHT = { median: 4, deviation: 2 }

/** The weight of the fields selected under `member` of an aggregate response, 1 for the plain functions. */
function memberWeight(parent: GraphQLNamedType | undefined, member: string) {
  if (!parent?.name.endsWith('AggregateResponse') || !isStatistical(member as ColumnFunction)) return 1
  return member === 'median' || member === 'percentile' ? STATISTIC_WEIGHT.median : STATISTIC_WEIGHT.deviation
}

/** Where the walk stops: past any bound, the exact figures no longer matter. */
export interface CostBounds {
  maxDepth: number
  maxComplexity: number
  maxStatements: number
}

/**
 * The page a connection field asks for in the document (`first`, `last`, or an offset page's `limit`): the
 * default without one, and the largest any resource allows (`sizes.max`) for a size given as a variable.
 */
function requestedPageSize(field: FieldNode, sizes: PageSizes) {
  const paging = field.arguments?.find((argument) => argument.name.value === 'paging')
  if (!paging) return sizes.default
  if (paging.value.kind !== Kind.OBJECT) return sizes.max
  for (const name of ['first', 'last', 'limit']) {
    const size = paging.value.fields.find((entry) => entry.name.value === name)?.value
    if (size?.kind === Kind.INT) return Number(size.value)
    if (size) return sizes.max
  }
  return sizes.default
}

/** What a batched field loads, as its dataloader is keyed: the field, its arguments, what it selects. */
const loadKeys = new WeakMap<FieldNode, string>()

function loadKey(node: FieldNode) {
  let key = loadKeys.get(node)
  if (key === undefined) {
    key = print({ ...node, alias: undefined })
    loadKeys.set(node, key)
  }
  return key
}

/**
 * The page of groups an aggregate field asks for (`paging: {limit}`), at most `maxGroups`; a limit given as a
 * variable, or none, is taken to be `maxGroups`; undefined without paging.
 */
function groupPageSize(field: FieldNode, maxGroups: number) {
  const paging = field.arguments?.find((argument) => argument.name.value === 'paging')
  if (!paging) return undefined
  const limit =
    paging.value.kind === Kind.OBJECT
      ? paging.value.fields.find((entry) => entry.name.value === 'limit')
      : undefined
  return limit?.value.kind === Kind.INT ? Math.min(Number(limit.value.value), maxGroups) : maxGroups
}

/**
 * The relation filters an argument's literal holds (`filter: { subTasks: { ... } }`), at any depth. A filter
 * given as a variable is not known here; the query limits (`maxRelationFilters`) bound it when it is parsed.
 */
function relationFilters(value: ValueNode, type: GraphQLInputType): number {
  const named = getNamedType(type)
  if (value.kind === Kind.LIST)
    return value.values.reduce((sum, item) => sum + relationFilters(item, type), 0)
  if (value.kind !== Kind.OBJECT || !isInputObjectType(named)) return 0
  let count = 0
  const fields = named.getFields()
  for (const entry of value.fields) {
    const field = fields[entry.name.value]
    if (!field) continue
    if (isRelationFilter(field)) count++
    count += relationFilters(entry.value, field.type)
  }
  return count
}

function argumentRelationFilters(node: FieldNode, args: readonly GraphQLArgument[]) {
  let count = 0
  for (const argument of node.arguments ?? []) {
    const definition = args.find((arg) => arg.name === argument.name.value)
    if (definition) count += relationFilters(argument.value, definition.type)
  }
  return count
}

const isConnection = (field: FieldNode) =>
  field.arguments?.some((argument) => argument.name.value === 'paging') ?? false

/** Where a selection set is walked. */
interface Level {
  /** Its type; undefined below a field validation will report as unknown. */
  type: GraphQLNamedType | undefined
  /** How many times it is resolved. */
  times: number
  /** How many times the field it is the selection of is resolved: a connection's, once per page. */
  ownerTimes: number
  depth: number
  /** The fragments being spread around it, which a spread inside must not enter again. */
  spreading: Set<string>
  /** The batched fields selected at this level so far (fragments included), by what they load. */
  batched: Set<string>
  /** False inside a copy of a batched field selected earlier at the same level: its loads are shared. */
  countStatements: boolean
}

/**
 * What one operation may cost, worked out from its document before anything runs:
 * - `cost`: every selection counts once per time it is resolved; what a connection selects is resolved once
 *   per record of its page (an empty page counts as one: `first: 0` must not make anything free), what an
 *   aggregate list selects once per entry (up to the resource's `maxGroups` per statement with `groupBy`,
 *   else one per parent); a relation filter in an argument's literal as much as a connection of the default
 *   page size; a field of a median costs four, of a deviation or variance two (see `STATISTIC_WEIGHT`);
 * - `statements`: the SQL statements it runs: one per root query and per root `totalCount`, one per batch of
 *   parents for relations and relation aggregates (see `FieldWork`); a connection's `aggregate` counts as the
 *   root or relation aggregate it is, once per connection rather than per record of the page. Aliases of one
 *   relation field with the same arguments and selection load together, through the same dataloader, and
 *   count once;
 * - `depth`: the deepest nesting of fields.
 * The walk follows fragments wherever they are spread, stops once the cost or the statements are past their
 * bounds and goes no deeper than one level past `maxDepth`. Since every selection costs at least one, it
 * takes at most `maxComplexity` steps, even for fragments that spread each other twice at every level.
 */
export class OperationCost {
  cost = 0
  statements = 0
  depth = 0

  constructor(
    private readonly context: ValidationContext,
    private readonly sizes: PageSizes,
    private readonly bounds: CostBounds
  ) {}

  get exceeded() {
    return this.cost > this.bounds.maxComplexity || this.statements > this.bounds.maxStatements
  }

  /** Walks an operation's selections from its root type. */
  walkOperation(operation: OperationDefinitionNode) {
    const type = this.context.getSchema().getRootType(operation.operation) ?? undefined
    const level = {
      type,
      times: 1,
      ownerTimes: 1,
      depth: 0,
      spreading: new Set<string>(),
      countStatements: true
    }
    this.walk(operation.selectionSet, { ...level, batched: new Set() })
  }

  private walk(selections: SelectionSetNode, level: Level) {
    for (const selection of selections.selections) {
      if (this.exceeded) return
      this.cost += level.times
      if (selection.kind === Kind.FIELD) {
        this.field(selection, level)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition && this.typeNamed(selection.typeCondition.name.value)
        this.walk(selection.selectionSet, { ...level, type: condition ?? level.type })
      } else {
        const name = selection.name.value
        const fragment = this.context.getFragment(name)
        // A fragment spreading itself is a validation error; here it just ends the walk.
        if (!fragment || level.spreading.has(name)) continue
        level.spreading.add(name)
        const type = this.typeNamed(fragment.typeCondition.name.value)
        this.walk(fragment.selectionSet, { ...level, type })
        level.spreading.delete(name)
      }
    }
  }

  private typeNamed(name: string) {
    return this.context.getSchema().getType(name) ?? undefined
  }

  private field(node: FieldNode, level: Level) {
    // Introspection (`__schema`, `__type`) reads the schema, not the database; tools nest it 15 deep.
    if (node.name.value.startsWith('__')) return
    this.depth = Math.max(this.depth, level.depth + 1)
    const { type } = level
    const definition =
      type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields()[node.name.value] : undefined
    const work = definition && workOf(definition)
    // A connection's `aggregate` resolves once per connection, not once per record of its page.
    const times = work?.besideRecords ? level.ownerTimes : level.times
    let countStatements = level.countStatements
    let batches = 1
    const groupPage = work?.maxGroups ? groupPageSize(node, work.maxGroups) : undefined
    if (work?.statements === 'batched') {
      // Pages of groups per parent: as many parents per statement as their pages fit in maxGroups.
      const batchSize =
        groupPage === undefined
          ? (work.batchSize ?? 1)
          : Math.max(1, Math.min(work.batchSize ?? 1, Math.floor(work.maxGroups! / (groupPage + 1))))
      batches = Math.ceil(times / batchSize)
      const loads = loadKey(node)
      if (level.batched.has(loads)) countStatements = false
      level.batched.add(loads)
    }
    if (work && countStatements) this.statements += batches
    // A relation filter looks at related records for every record it is tested on: it costs what a
    // connection of the default page size would, each time the field is resolved.
    if (definition && node.arguments?.length) {
      this.cost += times * this.sizes.default * argumentRelationFilters(node, definition.args)
    }
    // Below the deepest level allowed, the depth is reported and nothing else matters.
    if (!node.selectionSet || this.depth > this.bounds.maxDepth) return
    let inner = times
    if (groupPage !== undefined) {
      inner = times * groupPage
    } else if (work?.maxGroups) {
      if (this.selectsGroupBy(node.selectionSet, new Set())) inner = batches * work.maxGroups
    } else if (isConnection(node)) {
      inner = times * Math.max(requestedPageSize(node, this.sizes), 1)
    } else if (work?.listSize) {
      inner = times * work.listSize
    } else {
      inner = times * memberWeight(type, node.name.value)
    }
    this.walk(node.selectionSet, {
      type: definition && getNamedType(definition.type),
      times: inner,
      ownerTimes: times,
      depth: level.depth + 1,
      spreading: level.spreading,
      batched: new Set(),
      countStatements
    })
  }

  /**
   * Whether an aggregate's selection asks for `groupBy` (then one entry per group, else one in all), also
   * under the `nodes` of a page of groups.
   */
  private selectsGroupBy(selections: SelectionSetNode, visited: Set<string>): boolean {
    return selections.selections.some((selection) => {
      if (selection.kind === Kind.FIELD && selection.name.value === 'nodes' && selection.selectionSet) {
        return this.selectsGroupBy(selection.selectionSet, visited)
      }
      if (selection.kind === Kind.FIELD) return selection.name.value === 'groupBy'
      if (selection.kind === Kind.INLINE_FRAGMENT) return this.selectsGroupBy(selection.selectionSet, visited)
      const fragment = this.context.getFragment(selection.name.value)
      if (!fragment || visited.has(selection.name.value)) return false
      visited.add(selection.name.value)
      return this.selectsGroupBy(fragment.selectionSet, visited)
    })
  }
}
