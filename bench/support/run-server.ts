import { once } from 'node:events'
import type { Server } from 'node:http'

/**
 * Runs a benchmark server script: `start` listens on a free port (0), and the port is printed as
 * `READY <port>`, which `startScript` waits for. A failure to start ends the process with it.
 */
export function runServer(start: () => Promise<Server>) {
  start()
    .then(async (server) => {
      if (!server.listening) await once(server, 'listening')
      const address = server.address()
      console.log(`READY ${typeof address === 'object' && address ? address.port : ''}`)
    })
    .catch((error) => {
      console.error(error)
      process.exit(1)
    })
}
