import { databaseMismatches } from '../schema/check'
import type { SchemaMismatch } from '../schema/compare'
import { feathersQueryState } from '../state'

/**
 * How the tables of an application's resources differ from their schemas, as the start-up check finds
 * them (for a health check, or a test of the application's migrations): empty when they fit.
 */
export async function schemaDifferences(app: object): Promise<SchemaMismatch[]> {
  const state = feathersQueryState(app)
  if (!state) return []
  return databaseMismatches(
    new Map(state.resources.map((resource) => [resource, state.serviceOf(resource).Model]))
  )
}
