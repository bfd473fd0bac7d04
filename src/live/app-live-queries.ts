import type { Application } from '@feathersjs/feathers'
import { LiveQueries } from './live-queries'
import { resolveLiveOptions, type LiveOptions } from './live-options'
import { StatementTables } from './statement-tables'
import { feathersQueryState } from '../state'
import { dialectOf } from '../dialect/dialect-of'
import type { ResolvedResource } from '../resource/resolved'

const hubs = new WeakMap<object, LiveQueries>()
const options = new WeakMap<object, LiveOptions | undefined>()

/** Sets the application's `live` options, read when its live queries start. */
export function setLiveOptions(app: object, live: LiveOptions | undefined) {
  options.set(app, live)
}

/** The application's live queries, made at the first one (GraphQL and Feathers clients share them). */
export function liveQueriesOf(app: Application): LiveQueries {
  let hub = hubs.get(app)
  if (!hub) {
    const serviceAt = (path: string) => {
      try {
        return app.service(path) as never
      } catch {
        return undefined
      }
    }
    const tables = new StatementTables(() => feathersQueryState(app)?.resources ?? [])
    const binaryText = (resource: ResolvedResource) => {
      const service = feathersQueryState(app)?.serviceOf(resource)
      return !!service && dialectOf(service.Model).name !== 'mysql'
    }
    hubs.set(
      app,
      (hub = new LiveQueries(resolveLiveOptions(options.get(app)), serviceAt, tables, binaryText))
    )
  }
  return hub
}
