import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa, rest } from '@feathersjs/koa'
import knex from 'knex'
import { errorHandler, feathersQuery } from 'feathers-query'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { exampleResources } from '../../example/resources'
import { runServer } from './run-server'

/**
 * The example resources on DATABASE_URL with the documents of TRUSTED_DOCUMENTS (a JSON object of documents by
 * id) registered, in a process of its own. `GET /__statements` answers how many SQL statements ran so far.
 */
async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  await migrateLatest(db)
  let statements = 0
  db.on('query', () => statements++)
  const app = koa(feathers())
  app.use(errorHandler())
  app.use(async (ctx, next) => {
    if (ctx.path !== '/__statements') return next()
    ctx.body = { statements }
  })
  app.use(bodyParser())
  app.configure(rest())
  const documents = JSON.parse(process.env.TRUSTED_DOCUMENTS!) as Record<string, string>
  app.configure(
    feathersQuery({ Model: db, resources: exampleResources, graphql: { trustedDocuments: { documents } } })
  )
  return app.listen(0)
}

runServer(main)
