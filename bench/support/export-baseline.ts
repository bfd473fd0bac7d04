import { stringify } from 'csv-stringify'
import knex from 'knex'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { knexConfig } from '../../example/database'

/**
 * The baseline of the export benchmark: the same SELECT streamed by knex straight into csv-stringify,
 * no HTTP, no Feathers, no hooks. It starts on a message from the parent, which reads the idle memory first.
 */
async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  await db.raw('select 1')
  console.log('READY')
  await new Promise((resolve) => process.once('message', resolve))
  const columns = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority', 'subTasksCount']
  // The example's SQL-computed subTasksCount, which the export writes too: the same subquery.
  const subTasksCount = db.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ??) AS ??', [
    'sub_tasks as counted',
    'counted.todoItemId',
    'todo_items.id',
    'subTasksCount'
  ])
  let bytes = 0
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length
      callback()
    }
  })
  const started = process.hrtime.bigint()
  await pipeline(
    db('todo_items').select([...columns.slice(0, -1), subTasksCount]).orderBy('id').stream(),
    stringify({ header: true, columns, quoted_string: true }),
    sink
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  console.log(`DONE ${JSON.stringify({ seconds, bytes })}`)
  await db.destroy()
  process.disconnect()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
