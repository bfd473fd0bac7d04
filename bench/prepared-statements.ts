import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import { performance } from 'node:perf_hooks'
import { feathersQuery } from 'feathers-query'
import { exampleResources } from '../example/resources'
import { benchDatabase, seedTodoItems } from './support/databases'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag } from './support/flags'

assertCompiledPlugin()

/**
 * What reusing prepared statements (`sqlite.reuseStatements`, on by default) is worth on better-sqlite3:
 * the same service calls on one SQLite database, through a plugin that keeps its statements prepared and
 * through one that leaves them to knex, which prepares each statement anew. Service calls in-process (hooks
 * included, no HTTP), so the difference is not lost in the noise of a network stack; the two take turns for
 * `--rounds` rounds of `--calls` calls and the median ratio is printed.
 *
 *   npm run bench:statements -- --items 10000 --calls 3000 --rounds 5
 */
const items = flag('items', 10_000)
const calls = flag('calls', 3000)
const rounds = Math.max(1, flag('rounds', 5))

type Call = (service: any, index: number) => Promise<unknown>

const scenarios: Array<[name: string, call: Call]> = [
  ['get by id', (service, index) => service.get((index % items) + 1)],
  [
    'page of 25, one filter',
    (service, index) =>
      service.find({
        queryModel: true,
        query: { filter: { completed: { is: index % 2 === 0 } }, paging: { limit: 25, offset: index % 100 } }
      })
  ]
]

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function main() {
  const database = await benchDatabase('sqlite')
  await seedTodoItems(database.db, items)
  const serviceWith = (reuseStatements: boolean) => {
    const app = koa(feathers())
    app.configure(
      feathersQuery({
        Model: database.db,
        resources: exampleResources,
        sqlite: { reuseStatements },
        graphql: false
      })
    )
    return app.service('todo-items')
  }
  const reusing = serviceWith(true)
  const throughKnex = serviceWith(false)
  const time = async (service: unknown, call: Call) => {
    const start = performance.now()
    for (let index = 0; index < calls; index++) await call(service, index)
    return performance.now() - start
  }
  console.log(`SQLite, ${items} todo items, ${calls} calls per round, ${rounds} rounds (speed: calls/s)`)
  for (const [name, call] of scenarios) {
    await time(reusing, call)
    await time(throughKnex, call)
    const ratios: number[] = []
    const speeds: Array<[number, number]> = []
    for (let round = 0; round < rounds; round++) {
      const [reused, prepared] = [await time(reusing, call), await time(throughKnex, call)]
      ratios.push(prepared / reused)
      speeds.push([(calls * 1000) / reused, (calls * 1000) / prepared])
    }
    const middle = median(ratios)
    const [reused, prepared] = speeds[ratios.indexOf(middle)]
    console.log(
      `${name}: reused ${reused.toFixed(0)}/s, prepared anew ${prepared.toFixed(0)}/s, ` +
        `ratio ${middle.toFixed(2)} (rounds ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')})`
    )
  }
  await database.drop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
