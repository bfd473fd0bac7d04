/** What feathers-sync's Redis adapter leaves on `app.sync`: the client it publishes with. */
interface RedisSync {
  type: 'redis'
  pub: { isReady?: boolean; ping(): Promise<unknown> }
}

/** Longer than any round trip to a working broker; a write's answer never waits longer than this for it. */
const BROKER_WAIT_MS = 1000

/**
 * Waits until the broker has the events the write just emitted, when feathers-sync sends them through Redis.
 * Its adapter publishes without waiting (the client writes on a later tick), so an instance could answer a
 * write before Redis has its event; a client that then writes the same record through another instance would
 * have that instance's event published first, and every instance would announce the two in the wrong order
 * (`patched` before `created`: a client would keep the created record's stale fields). Redis answers the
 * commands of one connection in order, so the answer to a PING sent after the PUBLISH means that Redis has
 * passed the event to every subscriber before anything published later.
 *
 * Not while the client is reconnecting: the events then wait in its queue and their order is lost anyway, so
 * writes are not held up for the outage. (feathers-sync's NATS and AMQP adapters give no such guarantee.)
 */
export async function eventsHandedToBroker(app: unknown): Promise<void> {
  const sync = (app as { sync?: Partial<RedisSync> }).sync
  if (sync?.type !== 'redis' || !sync.pub || sync.pub.isReady === false) return
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, BROKER_WAIT_MS)
  })
  try {
    await Promise.race([sync.pub.ping(), waited])
  } catch {
    // The write is done; feathers-sync reports the client's errors itself.
  } finally {
    clearTimeout(timer)
  }
}
