import type { Koa } from '@feathersjs/koa'

// Koa's types as @feathersjs/koa, a peer dependency, brings them: the plugin imports nothing from `koa`.
export type Context = Koa.Context
export type Next = Koa.Next
