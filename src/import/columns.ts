import { BadRequest } from '@feathersjs/errors'
import { createSchemaOf } from '../resource/input-schemas'
import { serializedFields, type ResolvedField, type ResolvedResource } from '../resource/resolved'

/**
 * What an import does with each member of a record: the create body's properties are imported; fields an
 * export writes that a create does not take (a generated id, server-set timestamps, computed fields) are left
 * out, and the report lists them, so that an export's file goes back in as it is. Anything else is the
 * create's business: its validation refuses a property it does not know.
 */
export class ImportColumns {
  readonly writable: ReadonlyMap<string, ResolvedField>
  private readonly readOnly: ReadonlySet<string>
  /** Members the import left out, in the order it met them. */
  readonly ignored = new Set<string>()

  constructor(resource: ResolvedResource) {
    const properties = Object.keys(createSchemaOf(resource).properties)
    // A custom create schema names stored fields only (checked when the resource is resolved).
    this.writable = new Map(properties.map((name) => [name, resource.fieldMap.get(name)!]))
    this.readOnly = new Set(
      serializedFields(resource)
        .map((field) => field.name)
        .filter((name) => !this.writable.has(name))
    )
  }

  /** Whether a member is one an export writes and a create does not take (noted as ignored). */
  leftOut(name: string) {
    if (!this.readOnly.has(name)) return false
    this.ignored.add(name)
    return true
  }

  /**
   * A CSV header's columns: each one's field, `null` for one left out. An empty or repeated name is a 400 on
   * line 1, as is a name that is no field at all: every one of its cells would fail.
   */
  header(names: unknown[]): Array<ResolvedField | null> {
    const seen = new Set<string>()
    return names.map((raw, index) => {
      const name = typeof raw === 'string' ? raw.trim() : ''
      if (!name) throw headerError(`column ${index + 1} has no name`)
      if (seen.has(name)) throw headerError(`column "${name}" appears twice`)
      seen.add(name)
      if (this.writable.has(name)) return this.writable.get(name)!
      if (this.leftOut(name)) return null
      throw headerError(`column "${name}" is no field a create takes`)
    })
  }
}

function headerError(message: string) {
  return new BadRequest(`Line 1 (the header): ${message}`, {
    line: 1,
    errors: [{ field: 'header', message }]
  })
}
