import type { ResolvedResource } from '../resource/resolved'

// An augmentation repeats the type parameters of what it augments, used or not.
/* eslint-disable @typescript-eslint/no-unused-vars, @typescript-eslint/no-explicit-any */
declare module '@feathersjs/feathers/lib/declarations' {
  interface ServiceOptions<MethodTypes = string> {
    /** Set by feathers-query on each resource service; transports read the resource from here. */
    resource?: ResolvedResource
  }
  interface HookContext<A = Application, S = any> {
    /**
     * Set by feathers-query on its resources' writes: the records as the write left them in the database,
     * hidden fields included, whatever `$select` or resolvers made of `result`. Real-time events are
     * authorized against these.
     */
    writtenRecords?: Array<Record<string, unknown>>
    /** Set by feathers-query on an upsert: the event of each written record, `created` or `patched`. */
    writtenEvents?: string[]
  }
}
/* eslint-enable @typescript-eslint/no-unused-vars, @typescript-eslint/no-explicit-any */
