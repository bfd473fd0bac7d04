import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { DEFAULTS } from '../src/resource/defaults'
import { feathersQueryConfiguration } from '../src/registration/configuration'

/**
 * The reference in docs/reference/ against the code, so that it cannot drift: every option of the public
 * option types and every export of the three entries (read with the TypeScript compiler, as a user's editor
 * sees them), the configuration's schema, the defaults table and the GraphQL error codes. A name the code has
 * and the reference lacks fails, and so does one the reference still lists after the code dropped it.
 */

const ROOT = resolve(__dirname, '..')
const REFERENCE = join(ROOT, 'docs/reference')

/** Whose options each option table documents, and the type the code gives them. */
const OPTION_TYPES: Record<string, string> = {
  feathersQuery: 'FeathersQueryOptions',
  defineResource: 'ResourceDefinition',
  IDField: 'IDFieldOptions',
  FilterableField: 'FilterableFieldOptions',
  Field: 'FieldOptions',
  searchFields: 'SearchOptions',
  swaggerUi: 'SwaggerUiOptions',
  graphiql: 'GraphiqlPageOptions',
  resourceClient: 'ResourceClientOptions',
  gracefulShutdown: 'GracefulShutdownOptions'
}

const ENTRIES: Record<string, string> = {
  'feathers-query': 'src/index.ts',
  'feathers-query/pages': 'src/pages.ts',
  'feathers-query/client': 'src/client.ts'
}

/** Option types the reference documents member by member; others (Knex, Filter, schemas) are one option. */
const DOCUMENTED_MEMBERS = /(Options|Limits|Definition|Setting)$/

// ---- what the code has ---------------------------------------------------------------------------------

/** The program of the three entries, plus a module naming the option types with their default arguments. */
function compile() {
  const probe = join(ROOT, 'test', '__docs-reference-probe__.ts')
  const probeSource = [
    `import type { FeathersQueryOptions, ResourceDefinition, IDFieldOptions, FilterableFieldOptions,`,
    `  FieldOptions, SearchOptions, GracefulShutdownOptions } from '../src/index'`,
    `import type { SwaggerUiOptions, GraphiqlPageOptions } from '../src/pages'`,
    `import type { ResourceClientOptions } from '../src/client'`,
    `export interface Probe {`,
    ...Object.values(OPTION_TYPES).map((type) => `  ${type}: ${type}`),
    `}`
  ].join('\n')
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} }
  )
  assert.ok(config, 'tsconfig.json could not be read')
  const host = ts.createCompilerHost(config.options)
  const getSourceFile = host.getSourceFile
  host.getSourceFile = (file, language, ...rest) =>
    resolve(file) === probe
      ? ts.createSourceFile(file, probeSource, language)
      : getSourceFile.call(host, file, language, ...rest)
  const fileExists = host.fileExists
  host.fileExists = (file) => resolve(file) === probe || fileExists.call(host, file)
  const entries = Object.values(ENTRIES).map((entry) => join(ROOT, entry))
  const program = ts.createProgram([...entries, probe], config.options, host)
  return { program, checker: program.getTypeChecker(), probe }
}

const { program, checker, probe } = compile()

function typeName(type: ts.Type) {
  return (type.aliasSymbol ?? type.getSymbol())?.getName() ?? ''
}

/** Option paths of a type: `graphql.limits.maxDepth`, `many.<name>.through.otherKey`. */
function optionPaths(type: ts.Type, prefix = '', paths = new Set<string>()) {
  for (const property of checker.getPropertiesOfType(type)) {
    const path = prefix ? `${prefix}.${property.name}` : property.name
    paths.add(path)
    const declaration = property.valueDeclaration ?? property.declarations?.[0]
    if (!declaration) continue
    const propertyType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration))
    const members = propertyType.isUnion() ? propertyType.types : [propertyType]
    for (const member of members) {
      if (DOCUMENTED_MEMBERS.test(typeName(member))) {
        optionPaths(member, path, paths)
        continue
      }
      // A map of named entries (`many: { subTasks: {...} }`): its entries' options under `<name>`.
      const entry = checker.getIndexInfoOfType(member, ts.IndexKind.String)?.type
      if (entry && DOCUMENTED_MEMBERS.test(typeName(entry))) optionPaths(entry, `${path}.<name>`, paths)
    }
  }
  return paths
}

function codeOptions(owner: string): Set<string> {
  const probeFile = program.getSourceFile(probe)!
  const probeType = checker.getTypeAtLocation(
    probeFile.statements.find((statement) => ts.isInterfaceDeclaration(statement))!
  )
  const property = checker.getPropertyOfType(probeType, OPTION_TYPES[owner])!
  return optionPaths(checker.getTypeOfSymbolAtLocation(property, probeFile))
}

function codeExports(entry: string): Set<string> {
  const source = program.getSourceFile(join(ROOT, ENTRIES[entry]))!
  return new Set(
    checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).map((symbol) => symbol.name)
  )
}

/** Every property path of a JSON schema, through unions (`graphql: false | {...}`). */
function schemaPaths(schema: Record<string, unknown>, prefix = '', paths = new Set<string>()) {
  for (const member of (schema.anyOf as Array<Record<string, unknown>> | undefined) ?? [schema]) {
    const properties = (member.properties ?? {}) as Record<string, Record<string, unknown>>
    for (const [name, property] of Object.entries(properties)) {
      const path = prefix ? `${prefix}.${name}` : name
      paths.add(path)
      schemaPaths(property, path, paths)
    }
  }
  return paths
}

/** The `extensions.code`s the sources give GraphQL errors. */
function graphqlCodes(): Set<string> {
  const files = [
    join(ROOT, 'src/error-handler.ts'),
    ...readdirSync(join(ROOT, 'src/graphql'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(ROOT, 'src/graphql', file))
  ]
  const pattern =
    /(?:code: |\d{3}: \[?|\[)'([A-Z][A-Z_]+)'(?:, '|[,\s}\]]|$)|'([A-Z][A-Z_]+)' : graphqlCodeOf/gm
  const codes = new Set<string>()
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(pattern)) codes.add(match[1] ?? match[2])
  }
  return codes
}

// ---- what the reference says ----------------------------------------------------------------------------

interface Row {
  file: string
  owner?: string
  entry?: string
  /** The code spans of the first cell. */
  names: string[]
  cells: Record<string, string>
}

/** Cells of a table row, split on pipes that are not escaped (`'offset' \| 'none'`). */
function cellsOf(line: string) {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())
}

/**
 * The rows of every table in a reference file, with the function whose options they document (the last
 * heading naming `fn(`, or a line "Options of `fn`") and the entry whose exports they list (the last
 * `## \`feathers-query...\`` heading).
 */
function referenceRows(name: string): Row[] {
  const file = join(REFERENCE, name)
  const lines = readFileSync(file, 'utf8').split('\n')
  const rows: Row[] = []
  let owner: string | undefined
  let entry: string | undefined
  let header: string[] | undefined
  for (const line of lines) {
    const ownerMark = /^#+ .*?`(\w+)\(/.exec(line) ?? /^Options of `(\w+)`/.exec(line)
    if (ownerMark) owner = ownerMark[1]
    const entryMark = /^## `(feathers-query[\w/-]*)`/.exec(line)
    if (entryMark) entry = entryMark[1]
    if (!line.startsWith('|')) {
      header = undefined
      continue
    }
    const cells = cellsOf(line)
    if (!header) {
      header = cells
      continue
    }
    if (cells.every((cell) => /^-+$/.test(cell))) continue
    rows.push({
      file: name,
      owner,
      entry,
      names: [...cells[0].matchAll(/`([^`]+)`/g)].map((match) => match[1]),
      cells: Object.fromEntries(header.map((title, index) => [title, cells[index] ?? '']))
    })
  }
  return rows
}

const referenceFiles = readdirSync(REFERENCE).filter((file) => file.endsWith('.md'))
const allRows = referenceFiles.flatMap(referenceRows)
const optionRows = allRows.filter((row) => 'option' in row.cells && 'default' in row.cells)

function documentedOptions(owner: string): Map<string, Row> {
  return new Map(
    optionRows.filter((row) => row.owner === owner).flatMap((row) => row.names.map((name) => [name, row]))
  )
}

function difference(a: Iterable<string>, b: Set<string> | Map<string, unknown>) {
  return [...a].filter((name) => !b.has(name)).sort()
}

/** Where each value of the defaults table is documented: `DEFAULTS.pageSize.rest` → its option. */
function documentedDefault(key: string): [owner: string, option: string] | undefined {
  const [group, name] = key.split('.')
  const fixed: Record<string, [string, string]> = {
    'pageSize.rest': ['defineResource', 'query.defaultResultSize'],
    'pageSize.graphql': ['defineResource', 'query.defaultResultSize'],
    maxResultsSize: ['defineResource', 'query.maxResultsSize'],
    exactCountBelow: ['defineResource', 'query.exactCountBelow'],
    maxAggregateGroups: ['defineResource', 'aggregate.maxGroups'],
    maxFillBuckets: ['defineResource', 'aggregate.maxFillBuckets'],
    maxMulti: ['defineResource', 'maxMulti'],
    'exportBatches.size': ['defineResource', 'export.batchSize'],
    'exportBatches.maxMilliseconds': ['defineResource', 'export.maxBatchMilliseconds'],
    'exportCsv.bom': ['defineResource', 'export.bom'],
    'exportCsv.dateFormat': ['defineResource', 'export.dateFormat'],
    sqliteBusyTimeout: ['feathersQuery', 'sqlite.busyTimeout'],
    checkSchema: ['feathersQuery', 'checkSchema'],
    graphqlMaxBatchOperations: ['feathersQuery', 'graphql.maxBatchOperations']
  }
  if (fixed[key]) return fixed[key]
  if (group === 'queryLimits') return ['feathersQuery', `limits.${name}`]
  if (group === 'graphqlLimits') return ['feathersQuery', `graphql.limits.${name}`]
  if (group === 'realtime') return ['feathersQuery', `realtime.${name}`]
  if (group === 'health') return ['feathersQuery', `health.${name}`]
  if (group === 'caching') return ['feathersQuery', `caching.${name}`]
  if (group === 'import') return ['defineResource', `import.${name}`]
  // `gracefulShutdown`'s options, in exports.md (`signals.0`, `signals.1`: each signal in its default).
  if (group === 'shutdown') return ['gracefulShutdown', name]
  return undefined
}

type DefaultValue = number | string | boolean

function flatten(value: object, prefix = ''): Array<[string, DefaultValue]> {
  return Object.entries(value).flatMap(([name, member]) => {
    const key = prefix ? `${prefix}.${name}` : name
    return typeof member === 'object' ? flatten(member, key) : [[key, member] as [string, DefaultValue]]
  })
}

/**
 * Whether `text` states the default: a number as written in the docs (`1,048,576`, not as part of another
 * number), a boolean or string as code (`true`, `'iso'`).
 */
function mentionsDefault(text: string, value: DefaultValue) {
  if (typeof value !== 'number') return text.includes(`\`${value}\``) || text.includes(`\`'${value}'\``)
  const written = value.toLocaleString('en-US').replace(/,/g, '\\,')
  return new RegExp(`(?<![\\d,.])${written}(?![\\d]|,\\d)`).test(text)
}

// ---- the checks -----------------------------------------------------------------------------------------

describe('the reference documentation (docs/reference/)', function () {
  this.timeout(60000)

  for (const owner of Object.keys(OPTION_TYPES)) {
    it(`documents every option of ${owner}() and no other`, () => {
      const code = codeOptions(owner)
      const documented = documentedOptions(owner)
      assert.ok(code.size > 0, `no options found in the type ${OPTION_TYPES[owner]}`)
      assert.deepEqual(
        {
          undocumented: difference(code, documented),
          noLongerInTheCode: difference(documented.keys(), code)
        },
        { undocumented: [], noLongerInTheCode: [] },
        `docs/reference and ${OPTION_TYPES[owner]} disagree on the options of ${owner}()`
      )
    })
  }

  for (const entry of Object.keys(ENTRIES)) {
    it(`documents every export of ${entry} and no other`, () => {
      const code = codeExports(entry)
      const documented = new Set(
        allRows
          .filter((row) => row.file === 'exports.md' && row.entry === entry && 'name' in row.cells)
          .flatMap((row) => row.names)
      )
      assert.deepEqual(
        { undocumented: difference(code, documented), noLongerExported: difference(documented, code) },
        { undocumented: [], noLongerExported: [] },
        `docs/reference/exports.md and ${ENTRIES[entry]} disagree`
      )
    })
  }

  it('states every default of src/resource/defaults.ts where its option is documented', () => {
    const wrong: string[] = []
    for (const [key, value] of flatten(DEFAULTS)) {
      const where = documentedDefault(key)
      if (!where) {
        wrong.push(`DEFAULTS.${key}: no documented option is known for it (add it to documentedDefault)`)
        continue
      }
      const row = documentedOptions(where[0]).get(where[1])
      if (!row) wrong.push(`DEFAULTS.${key}: ${where[0]}'s option ${where[1]} is not documented`)
      else if (!mentionsDefault(row.cells.default, value)) {
        wrong.push(`DEFAULTS.${key} is ${value}; ${row.file} says "${row.cells.default}" for ${where[1]}`)
      }
    }
    assert.deepEqual(wrong, [])
  })

  it("marks exactly the options the configuration's feathersQuery takes", () => {
    const configurable = schemaPaths(feathersQueryConfiguration as unknown as Record<string, unknown>)
    const documented = documentedOptions('feathersQuery')
    const marked = new Set(
      [...documented].filter(([, row]) => row.cells.configuration === 'yes').map(([name]) => name)
    )
    const unmarkedOptions = [...configurable].filter((path) => documented.has(path) && !marked.has(path))
    const uncovered = [...configurable].filter(
      (path) => !documented.has(path) && ![...marked].some((option) => path.startsWith(`${option}.`))
    )
    assert.deepEqual(
      {
        markedButNotConfigurable: difference(marked, configurable),
        configurableButNotMarked: unmarkedOptions.sort(),
        configurableButUndocumented: uncovered.sort()
      },
      { markedButNotConfigurable: [], configurableButNotMarked: [], configurableButUndocumented: [] }
    )
  })

  it('lists every GraphQL error code the sources give', () => {
    const codes = graphqlCodes()
    assert.ok(codes.has('BAD_USER_INPUT') && codes.has('QUERY_TOO_COMPLEX'), 'the code scan found too little')
    const errors = readFileSync(join(REFERENCE, 'errors.md'), 'utf8')
    assert.deepEqual(
      [...codes].filter((code) => !errors.includes(`\`${code}\``)).sort(),
      [],
      'codes missing from docs/reference/errors.md'
    )
  })
})

describe('the documentation links', () => {
  const markdown = [
    join(ROOT, 'README.md'),
    ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .map((file) => join(ROOT, 'docs', file))
  ]

  /** GitHub's anchors: lower case, punctuation dropped, spaces as hyphens. */
  const anchorsOf = (file: string) =>
    new Set(
      readFileSync(file, 'utf8')
        .replace(/^```[\s\S]*?^```/gm, '')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) =>
          line
            .replace(/^#+ /, '')
            .trim()
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\s_-]/gu, '')
            .replace(/\s/g, '-')
        )
    )

  it('point at files and headings that exist', () => {
    const broken: string[] = []
    for (const file of markdown) {
      const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue
        const [path, anchor] = target.split('#')
        const resolved = path ? resolve(dirname(file), path) : file
        const where = `${relative(ROOT, file)}: ${target}`
        if (!existsSync(resolved)) broken.push(`${where} (no such file)`)
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
          broken.push(`${where} (no such heading)`)
        }
      }
    }
    assert.deepEqual(broken, [])
  })
})
