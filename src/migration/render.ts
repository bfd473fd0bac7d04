import { CODE_POINT_TEXT } from './code-point-text'
import type { MigrationPlan, TableChanges } from './migration-plan'
import { columnCode, foreignKeyCode, quote } from './render-column'
import type { ColumnPlan, IndexPlan, TablePlan } from './table-plan'

const INDENT = '  '

const indexCode = (index: IndexPlan) =>
  `table.${index.unique ? 'unique' : 'index'}([${index.columns.map(quote).join(', ')}])`

function block(statement: string, lines: string[]) {
  return [`${statement}, (table) => {`, ...lines.map((line) => INDENT + line), '})']
}

/** References to tables this migration creates later (a cycle), added once every table exists. */
function laterReferences(plan: MigrationPlan, table: TablePlan): ColumnPlan[] {
  const position = plan.create.indexOf(table)
  const later = new Set(plan.create.slice(position + 1).map((created) => created.table))
  return table.columns.filter((column) => column.references && later.has(column.references.table))
}

function createTable(plan: MigrationPlan, table: TablePlan): string[] {
  const deferred = laterReferences(plan, table)
  const columns = table.columns.map((column) =>
    columnCode(column, { withoutReference: deferred.includes(column) })
  )
  return block(`await knex.schema.createTable(${quote(table.table)}`, [
    ...columns,
    ...table.indexes.map(indexCode)
  ])
}

function alterTable(changes: TableChanges): string[] {
  const lines = [
    ...changes.add.map((column) => columnCode(column)),
    ...changes.indexes.map(indexCode),
    ...(changes.uniqueKey ? [indexCode(changes.uniqueKey)] : []),
    ...changes.allowNull.map((column) => `table.setNullable(${quote(column.column)})`),
    ...changes.widen.map(({ plan }) => columnCode(plan, { alter: true }))
  ]
  if (lines.length === 0) return []
  return block(`await knex.schema.alterTable(${quote(changes.table)}`, lines)
}

function undoAlterTable(changes: TableChanges): string[] {
  const lines = [
    ...changes.widen.map(
      ({ plan, was }) =>
        `// ${plan.column} stays widened (it was ${was.declaredType || was.type}): narrowing could cut values`
    ),
    ...changes.allowNull.map((column) => `table.dropNullable(${quote(column.column)})`),
    ...(changes.uniqueKey ? [`table.dropUnique([${changes.uniqueKey.columns.map(quote).join(', ')}])`] : []),
    ...changes.add
      .filter((column) => column.references)
      .map((column) => `table.dropForeign([${quote(column.column)}])`),
    ...(changes.add.length > 0
      ? [`table.dropColumns(${changes.add.map((column) => quote(column.column)).join(', ')})`]
      : [])
  ]
  if (lines.length === 0) return []
  return block(`await knex.schema.alterTable(${quote(changes.table)}`, lines)
}

function up(plan: MigrationPlan): string[] {
  const lines: string[] = []
  if (usesText(plan)) lines.push('const text = await codePointText(knex)')
  for (const table of plan.create) lines.push(...createTable(plan, table))
  for (const table of plan.create) {
    const deferred = laterReferences(plan, table)
    if (deferred.length > 0)
      lines.push(...block(`await knex.schema.alterTable(${quote(table.table)}`, deferred.map(foreignKeyCode)))
  }
  for (const changes of plan.alter) lines.push(...alterTable(changes))
  return lines
}

function down(plan: MigrationPlan): string[] {
  const lines: string[] = []
  for (const changes of [...plan.alter].reverse()) lines.push(...undoAlterTable(changes))
  for (const table of plan.create) {
    const deferred = laterReferences(plan, table)
    if (deferred.length === 0) continue
    const drops = deferred.map((column) => `table.dropForeign([${quote(column.column)}])`)
    lines.push(...block(`await knex.schema.alterTable(${quote(table.table)}`, drops))
  }
  for (const table of [...plan.create].reverse())
    lines.push(`await knex.schema.dropTable(${quote(table.table)})`)
  return lines
}

function usesText(plan: MigrationPlan) {
  const columns = [
    ...plan.create.flatMap((table) => table.columns),
    ...plan.alter.flatMap((changes) => [...changes.add, ...changes.widen.map(({ plan }) => plan)])
  ]
  return columns.some((column) => column.type.name === 'string' || column.type.name === 'text')
}

function asyncFunction(name: string, body: string[]) {
  return [
    `export async function ${name}(knex: Knex): Promise<void> {`,
    ...body.map((line) => INDENT + line),
    '}'
  ]
}

/**
 * The migration's TypeScript, in the shape `knex migrate:make` gives a Feathers CLI app. Everything is
 * written out (names, types, lengths, defaults): the file does not read the schemas, so it does what it
 * did when it first ran, whatever the schemas become.
 */
export function renderMigration(plan: MigrationPlan, command: string): string {
  const notes = plan.notes.flatMap((note) => ['//', ...wrap(note).map((line) => `// ${line}`)])
  const lines = [
    "// Written by feathers-query from the resources' schemas:",
    `//   ${command}`,
    '// Like any migration, it no longer follows them: edit it as you need before it runs.',
    ...(notes.length > 0 ? ['//', '// Left to you:', ...notes.slice(1)] : []),
    "import type { Knex } from 'knex'",
    '',
    ...asyncFunction('up', up(plan)),
    '',
    ...asyncFunction('down', down(plan)),
    ...(usesText(plan) ? [CODE_POINT_TEXT.trimEnd()] : [])
  ]
  return lines.join('\n') + '\n'
}

/** Words in lines of at most `width` characters. */
function wrap(text: string, width = 100): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  return line ? [...lines, line] : lines
}
