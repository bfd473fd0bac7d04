import type { Application } from '@feathersjs/koa'
import type { Server } from 'node:http'
import type { Knex } from 'knex'
import { ConfigurationError } from '../common/errors'
import type { Context, Next } from '../common/koa'
import { setLogger } from '../common/logger'
import { applyPaginate, linkResources, resolveDefinitions } from '../resource/resolve'
import type { ResolvedResource } from '../resource/resolved'
import { resolveQueryLimits } from '../resource/query-limits'
import { waitForLocksAsynchronously } from '../dialect/sqlite-locks'
import { shareTransaction } from '../service/transaction'
import { resourceService } from '../service/resource-service'
import { externalRecords } from '../feathers/external-records'
import { checkTransportOrder } from '../feathers/transport-order'
import { guardServiceLookup } from '../feathers/safe-lookup'
import { answerClientErrors } from '../feathers/unreadable-requests'
import { limitConnectionsPerUser } from '../feathers/connections-per-user'
import { setBudgets } from '../budgets/budgets'
import { resolveBudgets } from '../budgets/options'
import { addressSockets } from '../budgets/socket-address'
import { countWrites, writeGenerationOf } from '../feathers/write-generation'
import { cachingEnabled } from '../feathers/conditional-read'
import { DEFAULTS } from '../resource/defaults'
import { checkedPaginate, configuredOptions, type FeathersQueryConfiguration } from './configuration'
import { appWideOptions, type AppWideOptions } from './app-wide-options'
import { buildSurfaces, type Surfaces } from './surfaces'
import { registerService } from './services'
import type { FeathersQueryOptions } from './options'
import type { FeathersQueryState } from '../declarations'
import { setFeathersQueryState } from '../state'
import { checkDatabaseSchema } from '../schema/check'
import { instrumentDatabase } from '../dialect/statement-telemetry'
import { setLiveOptions } from '../live/app-live-queries'
import { resolveLiveOptions } from '../live/live-options'
import { registerLiveQueries } from '../feathers/live-queries-service'
import { keepImportBodiesStreaming } from '../rest/import-body'

/** One `feathersQuery()` call's resources, named in messages about them. */
function describeCall(resources: ResolvedResource[]) {
  return `the feathersQuery() call registering ${resources.map((resource) => resource.name).join(', ')}`
}

/**
 * The resources of every `feathersQuery()` call of one application. Each call registers its services at
 * once (so that its service file can add hooks right after); what spans every resource — relations between
 * calls, the GraphQL schema, the OpenAPI document, the spec's routes — is built once, when the application
 * is set up (or at the first request, for an application that is never set up).
 */
class Registry {
  readonly state: FeathersQueryState
  private readonly configuration: FeathersQueryConfiguration
  private readonly options: AppWideOptions
  private readonly registeredBy = new Map<ResolvedResource, ResolvedResource[]>()
  private readonly models = new Map<ResolvedResource, Knex>()
  private surfaces?: Surfaces

  constructor(private readonly app: Application) {
    this.configuration = configuredOptions(app)
    this.options = appWideOptions(this.configuration)
    this.state = { resources: [], serviceOf: (resource) => resourceService(app, resource) }
    setFeathersQueryState(app, this.state)
    // What clients get of the resources, and their events, is stripped outside the application's hooks;
    // hooks of the plugin's writes that call @feathersjs/knex services on the same knex join the write.
    app.hooks({ around: { all: [shareTransaction(), externalRecords()] } })
    guardServiceLookup(app)
    countWrites(app)
    answerClientErrors(app)
    // First of all the application's middleware, before its body parser reads an import's body whole.
    ;(app as unknown as { middleware: unknown[] }).middleware.unshift(
      keepImportBodiesStreaming(() => this.state.resources)
    )
    // The surfaces sit where the first call was configured, among the application's middleware.
    app.use((ctx: Context, next: Next) => this.complete().middleware(ctx, next))
    this.completeOnSetup()
  }

  register(options: FeathersQueryOptions) {
    if (this.surfaces) {
      throw new ConfigurationError(
        `feathersQuery() was called after the application was set up (app.listen or app.setup): ` +
          'configure every service before, as the Feathers CLI app does in src/services/index.ts'
      )
    }
    const resources = resolveDefinitions(options.resources ?? [])
    const Model = options.Model
    if (resources.length > 0 && !Model) {
      throw new ConfigurationError(
        `${describeCall(resources)} gives no Model: pass the knex instance of their tables, e.g. ` +
          "feathersQuery({ Model: app.get('sqliteClient'), resources })"
      )
    }
    const paginate = checkedPaginate(
      options.paginate ?? this.app.get('paginate'),
      options.paginate ? 'feathersQuery({ paginate })' : "The configuration's paginate"
    )
    for (const resource of resources) {
      applyPaginate(resource, paginate)
      this.checkUnique(resource, resources)
    }
    this.options.take(options, describeCall(resources))
    if (options.logger) setLogger(this.app, options.logger)
    const limits = resolveQueryLimits(options.limits ?? this.configuration.limits)
    const sqlite = options.sqlite ?? this.configuration.sqlite
    if (!Model) return
    waitForLocksAsynchronously(Model, sqlite)
    const generation = writeGenerationOf(this.app)
    for (const resource of resources) {
      this.registeredBy.set(resource, resources)
      this.models.set(resource, Model)
      this.state.resources.push(resource)
      registerService(this.app, resource, {
        Model,
        limits,
        reuseStatements: sqlite?.reuseStatements,
        writeGeneration: () => (this.cachesCounts(resource) ? generation.current() : undefined),
        related: (name) => this.named(name),
        routes: (ctx, next) => this.complete().routesOf(resource)(ctx, next)
      })
    }
    checkTransportOrder(this.app)
  }

  /**
   * Whether a resource's counts are reused while nothing is written: where its reads are cached (`caching`),
   * as the application's options stand at the count (a later `feathersQuery()` call may give them).
   */
  private cachesCounts(resource: ResolvedResource) {
    return cachingEnabled(this.options.current().caching, resource.definition.caching)
  }

  private named(name: string) {
    const resource = this.state.resources.find((candidate) => candidate.name === name)
    return resource && resourceService(this.app, resource)
  }

  /** No registration shadows another: names (GraphQL types) and base paths (services) are the resource's own. */
  private checkUnique(resource: ResolvedResource, call: ResolvedResource[]) {
    const registered = [...this.state.resources, ...call.slice(0, call.indexOf(resource))]
    const sameName = registered.find((other) => other.name === resource.name)
    const samePath = registered.find((other) => other.basePath === resource.basePath)
    const where = (other: ResolvedResource) =>
      this.registeredBy.has(other) ? describeCall(this.registeredBy.get(other)!) : 'the same call'
    if (sameName) {
      throw new ConfigurationError(
        `Resource ${resource.name} is registered twice: by ${where(sameName)} (base path ${sameName.basePath}) ` +
          `and by ${describeCall(call)} (base path ${resource.basePath}). Register each resource once, ` +
          'from its own service file, or give one of them another name.'
      )
    }
    if (samePath) {
      throw new ConfigurationError(
        `${resource.name} and ${samePath.name} (registered by ${where(samePath)}) share base path ` +
          `"${resource.basePath}": give one of them another basePath.`
      )
    }
    if (this.app.services[resource.basePath]) {
      throw new ConfigurationError(
        `${resource.name}: a service is already registered at "${resource.basePath}" (app.use), which the ` +
          'resource would replace: give the resource another basePath, or remove the other service.'
      )
    }
  }

  /** Links every registration's relations and builds the surfaces, once. */
  complete(): Surfaces {
    if (this.surfaces) return this.surfaces
    const resources = this.state.resources
    linkResources(resources)
    for (const resource of resources) {
      for (const relation of resource.relationMap.values()) this.checkSameDatabase(resource, relation)
    }
    const databases = [...new Set(this.models.values())]
    for (const database of databases) instrumentDatabase(database)
    this.surfaces = buildSurfaces(this.app, resources, this.options.current(), databases)
    this.state.graphqlSchema = this.surfaces.graphql?.schema
    this.state.graphqlPath = this.surfaces.graphql?.path
    this.state.openApiDocument = this.surfaces.openApiDocument
    return this.surfaces
  }

  private checkSameDatabase(
    resource: ResolvedResource,
    relation: ResolvedResource['many'][number] | ResolvedResource['one'][number]
  ) {
    const targets = [
      relation.target,
      ...('through' in relation && relation.through ? [relation.through.resource] : [])
    ]
    for (const target of targets) {
      if (this.models.get(target) === this.models.get(resource)) continue
      throw new ConfigurationError(
        `${resource.name}.${relation.name} relates to ${target.name}, whose feathersQuery() call gave another ` +
          'knex instance (Model): relations are read with joins, in one database. Register both with the same Model.'
      )
    }
  }

  /**
   * `app.listen` (Feathers' `setup` with the HTTP server) completes the registry and checks the tables against
   * the schemas before any service's own setup runs, and starts GraphQL over WebSocket on that server;
   * `app.teardown` stops it.
   */
  private completeOnSetup() {
    const { setup, teardown } = this.app
    Object.assign(this.app, {
      setup: async (httpServer?: Server, ...rest: unknown[]) => {
        const surfaces = this.complete()
        const { realtime, budgets, live, checkSchema = DEFAULTS.checkSchema } = this.options.current()
        if (checkSchema) {
          // `app.listen` has the server listening before setup: an app that fails its check must not serve.
          await checkDatabaseSchema(this.models).catch(async (error: unknown) => {
            if (httpServer?.listening) await new Promise((closed) => httpServer.close(closed))
            throw error
          })
        }
        surfaces.graphql?.websocket?.attach(httpServer)
        limitConnectionsPerUser(
          this.app,
          realtime?.maxConnectionsPerUser ?? DEFAULTS.realtime.maxConnectionsPerUser
        )
        setBudgets(this.app, resolveBudgets(budgets))
        setLiveOptions(this.app, live)
        if (!this.app.services[resolveLiveOptions(live).path]) {
          registerLiveQueries(this.app, () => this.state.resources, resolveLiveOptions(live))
        }
        const result = await (setup as (...args: unknown[]) => Promise<unknown>).call(
          this.app,
          httpServer,
          ...rest
        )
        // Feathers' socket.io server exists once its setup ran.
        addressSockets(this.app)
        return result
      },
      teardown: async (httpServer?: Server, ...rest: unknown[]) => {
        await this.surfaces?.graphql?.websocket?.detach()
        return (teardown as (...args: unknown[]) => Promise<unknown>).call(this.app, httpServer, ...rest)
      }
    })
  }
}

const registries = new WeakMap<Application, Registry>()

/** The application's registry, made (with the application-wide hooks and middleware) at the first call. */
export function registryOf(app: Application): Registry {
  let registry = registries.get(app)
  if (!registry) registries.set(app, (registry = new Registry(app)))
  return registry
}
