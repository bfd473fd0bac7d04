import { createServer, type AddressInfo } from 'node:net'

/** A port nothing listens on now, on 127.0.0.1. */
export function freePort() {
  return new Promise<number>((resolvePort) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolvePort(port))
    })
  })
}
