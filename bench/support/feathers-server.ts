import { feathers } from '@feathersjs/feathers'
import { bodyParser, errorHandler, koa, rest } from '@feathersjs/koa'
import { KnexService, type KnexAdapterParams } from '@feathersjs/knex'
import { hooks as schemaHooks } from '@feathersjs/schema'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'
import { subTasksCountColumn } from './raw-reads'
import {
  todoItemDataResolver,
  todoItemDataValidator,
  todoItemExternalResolver,
  todoItemQueryResolver,
  todoItemQueryValidator,
  todoItemResolver
} from './feathers-todo-items'

/**
 * The service's records carry the example's `subTasksCount`, counted in the same statement by the same
 * subquery, as a Feathers user adds a computed column: by extending `createQuery` (Feathers' own count of a
 * page clears the select list, so the page's total does not run it).
 */
class TodoItemService extends KnexService {
  constructor(private readonly database: Knex) {
    super({ Model: database, name: 'todo_items', paginate: { default: 25, max: 100 } })
  }

  override createQuery(params: KnexAdapterParams = {}) {
    return super.createQuery(params).select(subTasksCountColumn(this.database))
  }
}

/**
 * The app a Feathers user would write instead of using the plugin: Koa with `rest()`, a KnexService with
 * `paginate: { default: 25, max: 100 }` (every page is counted) and the schema hooks the Feathers CLI
 * generates. It serves the REST scenarios in Feathers' own syntax and page shape (`$limit`, `{ total, data }`).
 */
async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  const app = koa(feathers())
  app.use(async (ctx, next) => {
    const memory = memoryProbe(ctx.path)
    if (memory) ctx.body = memory
    else await next()
  })
  app.use(errorHandler())
  app.use(bodyParser())
  app.configure(rest())
  app.use('todo-items', new TodoItemService(db))
  app.service('todo-items').hooks({
    around: {
      all: [
        schemaHooks.resolveExternal(todoItemExternalResolver),
        schemaHooks.resolveResult(todoItemResolver)
      ]
    },
    before: {
      all: [
        schemaHooks.validateQuery(todoItemQueryValidator),
        schemaHooks.resolveQuery(todoItemQueryResolver)
      ],
      create: [schemaHooks.validateData(todoItemDataValidator), schemaHooks.resolveData(todoItemDataResolver)]
    }
  })
  return app.listen(0)
}

runServer(main)
