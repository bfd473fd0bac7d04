import type { ResolvedResource } from '../resource/resolved'

declare module '@feathersjs/feathers/lib/declarations' {
  interface ServiceOptions<MethodTypes = string> {
    /** Set by feathers-query on each resource service; transports read the resource from here. */
    resource?: ResolvedResource
  }
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface HookContext<A = Application, S = any> {
    /**
     * Set by feathers-query on its resources' writes: the records as the write left them in the database,
     * hidden fields included, whatever `$select` or resolvers made of `result`. Real-time events are
     * authorized against these.
     */
    writtenRecords?: Array<Record<string, unknown>>
  }
}
