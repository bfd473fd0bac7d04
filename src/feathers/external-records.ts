import { getServiceOptions, type HookContext, type NextFunction } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import type { ResolvedResource } from '../resource/resolved'
import { announceOnCommit } from '../service/transaction'
import { eventsHandedToBroker } from './broker'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { copyWith } from '../common/copy-with'
import { withoutFields } from '../common/without-fields'
import { callerAccess } from '../authorization/field-rules'
import { logFailure, loggerOf } from '../common/logger'
import { instruments, metering } from '../telemetry/telemetry'

/** The events of the write methods; the plugin emits them itself, with what clients may see. */
export const WRITE_EVENTS: Record<string, string> = {
  create: 'created',
  update: 'updated',
  patch: 'patched',
  remove: 'removed'
}

export type RecordStripper = (record: ResourceRecord) => ResourceRecord

/**
 * A record without the fields that never leave the server (hidden and filterOnly); other properties, such as
 * those a resolver added, stay. A record without any of them is returned as it is.
 */
export function recordStripper(resource: ResolvedResource): RecordStripper {
  return withoutFields(resource.fields.filter((field) => !field.serialized).map((field) => field.name))
}

/** What a method's result looks like to a client: records stripped, pages kept as pages. */
export function externalResult(context: HookContext, result: unknown, strip: RecordStripper): unknown {
  if (!result || typeof result !== 'object') return result
  if (Array.isArray(result)) return result.map(strip)
  const page = result as { data?: unknown }
  if (context.method === 'find' && Array.isArray(page.data))
    return copyWith(page, { data: page.data.map(strip) })
  return strip(result as ResourceRecord)
}

/**
 * Sets `context.dispatch` to `external` and makes it strip whatever is assigned to it later: a hook outside
 * this one (an application hook registered before the plugin) may still set it, from `context.result` with
 * every field, and transports and channels read it after that.
 */
function stripDispatchFromNowOn(context: HookContext, external: unknown, strip: RecordStripper) {
  let dispatch = external
  Object.defineProperty(context, 'dispatch', {
    configurable: true,
    enumerable: true,
    get: () => dispatch,
    set: (value: unknown) => {
      // Unset, a transport would send `context.result` as it is.
      dispatch = externalResult(context, value === undefined ? context.result : value, strip)
    }
  })
}

/**
 * An application-wide around hook, registered by the plugin, so that it runs outside every hook of the
 * resource services and every application hook registered after the plugin (where the Feathers CLI registers
 * them). After all of those have run, it sets `context.dispatch` (what Feathers' transports send and channels
 * publish) to the result — or to what `resolveExternal` or another hook made of it — without hidden and
 * filterOnly fields, and emits the write's event with those records, so that no transport and no event carries
 * them, whatever order those hooks and resolvers run in. (An application hook registered before the plugin
 * runs outside it: what it later makes `context.dispatch` is stripped as it is set.) Reads on the plugin's own
 * routes are left alone: those serialize what they send. Calls of other services pass through.
 * Registered once per application, for the resources of every `feathersQuery()` call.
 */
export function externalRecords() {
  const strippers = new WeakMap<ResolvedResource, RecordStripper>()
  const stripperOf = (resource: ResolvedResource) => {
    let strip = strippers.get(resource)
    if (!strip) strippers.set(resource, (strip = recordStripper(resource)))
    return strip
  }
  return async (context: HookContext, next: NextFunction) => {
    const resource = getServiceOptions(context.service)?.resource
    if (!resource) return next()
    const strip = stripperOf(resource)
    await next()
    // An import answers its report, no record (its records' creates were stripped and announced each).
    if (context.method === 'import') return
    const writeEvent = WRITE_EVENTS[context.method]
    const upsert = context.method === 'upsert'
    const writes = writeEvent !== undefined || upsert
    const params = context.params as ResourceParams
    if (!writes && (params.queryModel || !params.provider)) return
    const external = externalResult(context, context.dispatch ?? context.result, strip)
    // A write's answer is what its caller may read; its events carry more, for each connection to get its part.
    const access = writes ? (await callerAccess(resource, params))?.of(resource) : undefined
    const answer: RecordStripper = access ? (record) => access.strip(strip(record)) : strip
    const answered = access ? externalResult(context, external, access.strip) : external
    stripDispatchFromNowOn(context, answered, answer)
    // `context.event` is what Feathers' event hook would send; a hook may have set it to null to send none.
    // An upsert has no one event (Feathers gives a custom method none): each record goes out as its row went.
    if (!writes || (!upsert && typeof context.event !== 'string')) return
    const emitter = context.service as unknown as {
      emit(event: string, data: unknown, context: HookContext): void
    }
    const eventOf = (index: number) =>
      upsert ? (context.writtenEvents?.[index] ?? WRITE_EVENTS.create) : (context.event as string)
    const emit = () => {
      const records = Array.isArray(external) ? external : [external]
      for (const [index, record] of records.entries()) {
        const event = eventOf(index)
        if (metering()) countPublished(context.path, event, 1)
        try {
          emitter.emit(event, record, context)
        } catch (error) {
          // A listener's failure: the write is committed, so its answer stands and the other events go out.
          logFailure(loggerOf(context.app), error)
        }
      }
    }
    // A write made inside a transaction it did not open (another write's hooks, a GraphQL relation mutation)
    // is announced once that transaction commits, and never if it rolls back; whoever opened it answers.
    if (announceOnCommit((context.service as { Model?: Knex }).Model as Knex, emit)) return
    emit()
    await eventsHandedToBroker(context.app)
  }
}

function countPublished(path: string, event: string, count: number) {
  instruments().eventsPublished.add(count, { 'feathers.service.path': path, 'feathers_query.event': event })
}
