import { stringify } from 'csv-stringify'
import knex from 'knex'
import { Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { knexConfig } from '../../example/database'

/** How many bytes of its CSV the baseline keeps, for the parent to compare with the export's. */
export const COMPARED_BYTES = 64 * 1024

/**
 * The baseline of the export benchmark: the same SELECT streamed by knex straight into csv-stringify, no
 * HTTP, no Feathers, no hooks, writing the same file the export writes (the parent compares the two): the
 * same columns, the example's computed `age` included, booleans as `true`/`false`, dates as ISO 8601 and not
 * quoted, formulas escaped. Each row becomes the file's cells by hand, as a handler written for this one table
 * would do it. It starts on a message from the parent, which reads the idle memory first.
 */
async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  await db.raw('select 1')
  console.log('READY')
  await new Promise((resolve) => process.once('message', resolve))
  const columns = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority']
  // The example's SQL-computed subTasksCount, which the export writes too: the same subquery.
  const subTasksCount = db.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ??) AS ??', [
    'sub_tasks as counted',
    'counted.todoItemId',
    'todo_items.id',
    'subTasksCount'
  ])
  // SQLite keeps dates as epoch milliseconds and booleans as 0/1; MariaDB's booleans are 0/1 too; PostgreSQL
  // answers counts as strings.
  const date = (value: Date | number) => (typeof value === 'number' ? new Date(value) : value)
  const cells = new Transform({
    objectMode: true,
    transform(row: Record<string, unknown>, _encoding, callback) {
      const created = date(row.created as Date | number)
      callback(null, [
        row.id,
        row.title,
        row.description,
        Boolean(row.completed),
        created,
        date(row.updated as Date | number),
        Date.now() - created.getTime(),
        row.priority,
        Number(row.subTasksCount)
      ])
    }
  })
  let bytes = 0
  let head = ''
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (bytes < COMPARED_BYTES) head += chunk.toString().slice(0, COMPARED_BYTES - bytes)
      bytes += chunk.length
      callback()
    }
  })
  const header = [
    'id',
    'title',
    'description',
    'completed',
    'created',
    'updated',
    'age',
    'priority',
    'subTasksCount'
  ]
  const started = process.hrtime.bigint()
  await pipeline(
    db('todo_items')
      .select([...columns, subTasksCount])
      .orderBy('id')
      .stream(),
    cells,
    stringify({
      header: true,
      columns: header,
      quoted_string: true,
      escape_formulas: true,
      record_delimiter: '\n',
      cast: {
        boolean: (value) => (value ? 'true' : 'false'),
        date: (value) => value.toISOString()
      }
    }),
    sink
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  console.log(`DONE ${JSON.stringify({ seconds, bytes, head })}`)
  await db.destroy()
  process.disconnect()
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
