import net from 'node:net'

/**
 * A TCP proxy to a server (a database, a broker) that a test can cut (open connections reset, new ones
 * refused, as when the server stops), hang (nothing reaches either side any more and nothing is refused, as
 * when a network drops packets) and restore (listening again on the same port and forwarding again, as when
 * it comes back). With `latencyMs`, every chunk is forwarded that much later, in order, as over a slow link.
 */
export class TcpProxy {
  private server?: net.Server
  private sockets = new Set<net.Socket>()
  private hanging = false
  port = 0

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly latencyMs = 0
  ) {}

  async start(port = 0) {
    this.server = net.createServer((client) => {
      if (this.hanging) {
        // Accepted and never answered: the client waits for a greeting that does not come.
        this.sockets.add(client)
        client.on('close', () => this.sockets.delete(client))
        client.on('error', () => client.destroy())
        return
      }
      const upstream = net.connect(this.targetPort, this.targetHost)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      if (this.latencyMs === 0) client.pipe(upstream).pipe(client)
      else {
        // Timers of one duration fire in the order they were set: chunks, and the end after them, keep order.
        const delayed = (from: net.Socket, to: net.Socket) =>
          from
            .on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), this.latencyMs))
            .on('end', () => setTimeout(() => to.end(), this.latencyMs))
        delayed(client, upstream)
        delayed(upstream, client)
      }
    })
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve))
    this.port = (this.server.address() as net.AddressInfo).port
  }

  async cut() {
    for (const socket of this.sockets) socket.resetAndDestroy()
    this.sockets.clear()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }

  /** Open connections stop forwarding (they are not closed) and new ones are accepted and ignored. */
  async hang() {
    this.hanging = true
    if (!this.server?.listening) await this.start(this.port)
    for (const socket of this.sockets) {
      socket.unpipe()
      socket.pause()
    }
  }

  async restore() {
    if (this.hanging) {
      // The hung connections carry half-sent statements: the only way back is to drop them.
      this.hanging = false
      for (const socket of this.sockets) socket.destroy()
      this.sockets.clear()
    }
    if (!this.server?.listening) await this.start(this.port)
  }

  async stop() {
    for (const socket of this.sockets) socket.destroy()
    if (this.server?.listening) await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }
}
