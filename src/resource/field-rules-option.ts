/** What a request can do with a field. */
export type FieldUse = 'read' | 'filter' | 'sort' | 'groupBy' | 'aggregate'

export const FIELD_USES: readonly FieldUse[] = ['read', 'filter', 'sort', 'groupBy', 'aggregate']

/**
 * One field's rule for a caller: `false` takes every use away, `true` (or leaving the field out) keeps what
 * its annotation allows, an object takes away the uses set to `false`. A rule never grants what the schema
 * does not: `hidden` and `filterOnly` are the rule every caller has.
 */
export type FieldRule = boolean | Partial<Record<FieldUse, boolean>>

export type FieldRules<Name extends string = string> = Partial<Record<Name, FieldRule>>

/**
 * The resource option `fieldRules`: called with the params of each call from a client (`params.provider`
 * set), after its hooks, so `params.user` is there when `authenticate` put it there. Server code's own calls
 * are trusted, as Feathers' `resolveExternal` trusts them.
 */
export type FieldRulesOption<Name extends string = string> = (
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  params: any
) => FieldRules<Name> | undefined | Promise<FieldRules<Name> | undefined>
