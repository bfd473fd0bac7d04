import type { ColumnPlan } from './table-plan'

/** A string as a single-quoted TypeScript literal. */
export const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

const literal = (value: string | number | boolean) =>
  typeof value === 'string' ? quote(value) : String(value)

function typeCall(column: ColumnPlan): string {
  const name = quote(column.column)
  const { type } = column
  switch (type.name) {
    case 'string':
      return `text.string(table, ${name}, ${type.length})`
    case 'text':
      return `text.long(table, ${name}, ${type.length ?? 'undefined'})`
    case 'datetime':
      // Milliseconds, as the plugin's dates carry.
      return `table.datetime(${name}, { precision: 3 })`
    default:
      return `table.${type.name}(${name})`
  }
}

export interface ColumnOptions {
  /** Leave the reference out (it is added once the referenced table exists). */
  withoutReference?: boolean
  /** Changes a column that exists (`.alter()`). */
  alter?: boolean
}

/** The knex builder chain of a column: `table.integer('projectId').unsigned().notNullable().references(...)`. */
export function columnCode(column: ColumnPlan, options: ColumnOptions = {}): string {
  const chain = [typeCall(column)]
  const increments = column.type.name.endsWith('ncrements')
  if (column.unsigned && !increments) chain.push('unsigned()')
  if (column.primary && !increments) chain.push('primary()')
  if (!increments) chain.push(column.nullable ? 'nullable()' : 'notNullable()')
  if (column.default !== undefined) chain.push(`defaultTo(${literal(column.default)})`)
  const { references } = column
  if (references && !options.withoutReference && !options.alter) {
    chain.push(`references(${quote(references.column)})`, `inTable(${quote(references.table)})`)
    if (references.onDelete) chain.push(`onDelete(${quote(references.onDelete)})`)
  }
  if (options.alter) chain.push('alter()')
  return chain.join('.')
}

/** A reference added to a table that exists: `table.foreign('x').references('id').inTable('t')`. */
export function foreignKeyCode(column: ColumnPlan): string {
  const { references } = column
  const chain = [
    `table.foreign(${quote(column.column)})`,
    `references(${quote(references!.column)})`,
    `inTable(${quote(references!.table)})`
  ]
  if (references!.onDelete) chain.push(`onDelete(${quote(references!.onDelete)})`)
  return chain.join('.')
}
