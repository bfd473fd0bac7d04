import { feathers } from '@feathersjs/feathers'
import socketioClient from '@feathersjs/socketio-client'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { io, type Socket } from 'socket.io-client'
import { startScript } from '../../bench/support/processes'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { httpClient, type Http } from './http'
import { createTestDatabase, type DatabaseName } from './databases'
import knex from 'knex'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'

/** One database for all instances: SQLite as a file (WAL lets processes share it), the others fresh. */
export async function sharedDatabase(name: DatabaseName) {
  if (name !== 'sqlite') return createTestDatabase(name)
  const dir = mkdtempSync(join(tmpdir(), 'fq-scale-'))
  return {
    url: `sqlite:${join(dir, 'shared.sqlite')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true })
  }
}

/** The Redis that feathers-sync shares events through in the scale-out tests. */
export const REDIS = { host: '127.0.0.1', port: 6379 }

export function reachable({ host, port }: { host: string; port: number }) {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.end()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(false)
    })
  })
}

/** A feathers-sync channel of one test run's own, so that other runs on the same Redis are not heard. */
export function freshSyncKey() {
  return `fq-test-${process.pid}-${randomBytes(4).toString('hex')}`
}

export interface ServiceEvent {
  path: string
  event: string
  data: Record<string, unknown>
  at: number
}

/** An example app process, with an HTTP client and a socket.io client connected to it. */
export interface Instance {
  baseUrl: string
  http: Http
  socket: Socket
  /** The todo-items and sub-tasks events this instance's socket.io client received, in order. */
  events: ServiceEvent[]

  client: ReturnType<typeof feathers<Record<string, any>>>
  stop(): void
}

/**
 * Starts the example app in a process of its own on `databaseUrl`, sharing events on `syncKey` through Redis
 * (at `redisPort`: a proxy's, for a slow link).
 */
export async function startInstance(
  databaseUrl: string,
  syncKey: string,
  redisPort = REDIS.port
): Promise<Instance> {
  const env = {
    DATABASE_URL: databaseUrl,
    SYNC_URL: `redis://${REDIS.host}:${redisPort}`,
    SYNC_KEY: syncKey
  }
  const server = startScript('support/example-server.ts', env)
  const port = Number((await server.ready).payload)
  const baseUrl = `http://127.0.0.1:${port}`
  const socket = io(baseUrl, { transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', () => resolve()).once('connect_error', reject)
  )

  const client = feathers<Record<string, any>>().configure(socketioClient(socket))
  const events: ServiceEvent[] = []
  for (const path of ['todo-items', 'sub-tasks']) {
    for (const event of ['created', 'patched', 'updated', 'removed']) {
      const heard = (data: Record<string, unknown>) => events.push({ path, event, data, at: Date.now() })
      client.service(path).on(event, heard)
    }
  }
  return {
    baseUrl,
    http: httpClient(baseUrl),
    socket,
    events,
    client,
    stop() {
      socket.close()
      server.child.kill()
    }
  }
}

/** Waits until `done()` holds, checking every 20 ms, for at most `ms`. */
export async function eventually(done: () => boolean, ms = 5000) {
  const until = Date.now() + ms
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * `count` example app processes on one shared database of `name`, migrated once first (instances starting
 * together would race for the migration lock), their events on one feathers-sync key of their own.
 */
export async function startInstances(name: DatabaseName, count: number) {
  const database = await sharedDatabase(name)
  const db = knex(knexConfig(database.url))
  await migrateLatest(db)
  await db.destroy()
  const syncKey = freshSyncKey()
  const instances: Instance[] = []
  for (let index = 0; index < count; index++) instances.push(await startInstance(database.url, syncKey))
  return { database, syncKey, instances }
}
