import type { Knex } from 'knex'
import { ConfigurationError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { readCatalog } from './catalog'
import { describeMismatch, schemaMismatches, type SchemaMismatch } from './compare'
import { upsertKeyMismatches } from './unique-keys'

/** How every resource's table differs from its schema, one catalog statement per knex instance. */
export async function databaseMismatches(models: Map<ResolvedResource, Knex>): Promise<SchemaMismatch[]> {
  const byModel = new Map<Knex, ResolvedResource[]>()
  for (const [resource, knex] of models) byModel.set(knex, [...(byModel.get(knex) ?? []), resource])
  const found = await Promise.all(
    [...byModel].map(async ([knex, resources]) => {
      const catalog = await readCatalog(
        knex,
        resources.map((resource) => resource.table)
      )
      const present = resources.filter((resource) => catalog.hasTable(resource.table))
      return [...schemaMismatches(catalog, resources), ...(await upsertKeyMismatches(knex, present))]
    })
  )
  return found.flat()
}

/**
 * Fails start-up while a resource's table does not fit its schema, naming every difference at once: a
 * schema that drifted from its table otherwise starts quietly and answers each request with a 500.
 */
export async function checkDatabaseSchema(models: Map<ResolvedResource, Knex>): Promise<void> {
  const mismatches = await databaseMismatches(models)
  if (mismatches.length === 0) return
  throw new ConfigurationError(
    `The database does not fit the resources' schemas:\n` +
      mismatches.map((mismatch) => `  - ${describeMismatch(mismatch)}`).join('\n') +
      '\nWrite the migration that brings the tables in line with `npx feathers-query migration src/app.ts --diff` ' +
      '(docs/guide/schema-check-and-migrations.md), or turn this check off with feathersQuery({ checkSchema: false }).'
  )
}
