import { createContext, type HookContext } from '@feathersjs/feathers'

/**
 * Calls a service method the way Feathers' transports do and returns what they would send: `context.dispatch`
 * (what `resolveExternal` and the plugin's own stripping made of the result) or else the result.
 */
export async function externalCall(service: unknown, method: string, args: unknown[]): Promise<unknown> {
  const base = createContext(service as never, method, { http: {} })
  const context = (await (service as Record<string, (...args: unknown[]) => Promise<HookContext>>)[method](
    ...args,
    base
  )) as HookContext
  return context.dispatch !== undefined ? context.dispatch : context.result
}

/**
 * Calls a hooked service method and returns its hook context: its result, and its params as the hooks left
 * them (`authenticate` replaces them with ones that hold the user).
 */
export async function hookedCall(service: unknown, method: string, args: unknown[]): Promise<HookContext> {
  const base = createContext(service as never, method)
  return (await (service as Record<string, (...args: unknown[]) => Promise<HookContext>>)[method](
    ...args,
    base
  )) as HookContext
}
