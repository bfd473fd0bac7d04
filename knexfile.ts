import configuration from '@feathersjs/configuration'
import { knexConfig } from './example/database'
import { migrationSource } from './example/migrations'

// For the knex CLI (`npm run migrate`); the example application migrates by itself on start.
const { databaseUrl } = configuration()() as unknown as { databaseUrl: string }

module.exports = { ...knexConfig(databaseUrl), migrations: { migrationSource } }
