import type { Knex } from 'knex'
import { createRequire } from 'node:module'
import { extname, join, resolve } from 'node:path'
import { readAnnotation } from '../resource/annotations'
import type { ResourceDefinition } from '../resource/definition'
import { feathersQueryState } from '../state'
import { registerTypeScript } from './typescript-loader'

/** The resources a user's modules define, and the knex instance an application registered each with. */
export interface LoadedResources {
  definitions: ResourceDefinition[]
  /** By resource name, for the resources an exported application registered. */
  models: Map<string, Knex>
  /** The TypeScript loader the command registered to load them (tsx or ts-node), if it did. */
  loader?: string
}

function isDefinition(value: unknown): value is ResourceDefinition {
  if (!value || typeof value !== 'object') return false
  const { name, schema } = value as Partial<ResourceDefinition>
  const properties = schema?.properties
  return (
    typeof name === 'string' &&
    !!properties &&
    typeof properties === 'object' &&
    Object.values(properties).some((property) => readAnnotation(property) !== undefined)
  )
}

function collect(value: unknown, loaded: LoadedResources, seen: Set<unknown>) {
  if (seen.has(value)) return
  seen.add(value)
  const add = (definition: ResourceDefinition, model?: Knex) => {
    if (!loaded.definitions.some((known) => known.name === definition.name))
      loaded.definitions.push(definition)
    if (model) loaded.models.set(definition.name, model)
  }
  const state = value && typeof value === 'object' ? feathersQueryState(value) : undefined
  if (state) {
    for (const resource of state.resources) add(resource.definition, state.serviceOf(resource).Model)
  } else if (isDefinition(value)) add(value)
  else if (Array.isArray(value)) value.forEach((member) => collect(member, loaded, seen))
}

/**
 * Loads the modules (TypeScript through the application's loader) and takes what they export: a Feathers
 * application with the plugin (`src/app.ts` of a CLI app: every resource it registered, with its knex
 * instance), resource definitions (a service file's `defineResource(...)`), or arrays of them.
 */
export function loadResources(modules: string[], cwd: string): LoadedResources {
  const loaded: LoadedResources = { definitions: [], models: new Map() }
  const load = createRequire(join(cwd, 'package.json'))
  for (const module of modules) {
    const path = resolve(cwd, module)
    if (['.ts', '.cts', '.mts'].includes(extname(path)) && !require.extensions['.ts'])
      loaded.loader = registerTypeScript(cwd)
    const exported = load(path) as Record<string, unknown>
    const seen = new Set<unknown>()
    for (const value of [exported, ...Object.values(exported ?? {})]) collect(value, loaded, seen)
  }
  return loaded
}
