import { BadRequest, FeathersError, Timeout } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import { STATUS_CODES, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { PayloadTooLarge, RequestHeaderFieldsTooLarge } from '../common/errors'
import { countRefusal } from '../telemetry/telemetry'

/**
 * What Node answers itself, before any middleware, to a request it cannot read, as Feathers errors: Node's
 * own answers (431 for headers past its limit, 400 for a malformed request, 408 for one that took too long)
 * carry no body, so a client sees a status and nothing to say why.
 */
const REFUSALS: Record<string, () => FeathersError> = {
  HPE_HEADER_OVERFLOW: () =>
    new RequestHeaderFieldsTooLarge('The request headers are larger than the server accepts'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () =>
    new PayloadTooLarge('The request body has chunk extensions larger than the server accepts'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new Timeout('The request did not arrive in time')
}

function refusalOf(code: string | undefined) {
  if (code !== undefined && Object.hasOwn(REFUSALS, code)) return REFUSALS[code]()
  return new BadRequest('The request is not well-formed HTTP')
}

function answerClientError(this: Server, error: Error & { code?: string }, socket: Socket) {
  // A listener the application added (after `app.listen` returned, say) answers instead.
  if (this.listenerCount('clientError') > 1) return
  // As Node does: answer only where no response to this connection has started, then close it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const refusal = refusalOf(error.code)
    countRefusal(error.code ?? 'HPE_INVALID')
    const body = JSON.stringify(refusal.toJSON())
    socket.write(
      `HTTP/1.1 ${refusal.code} ${STATUS_CODES[refusal.code]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
    )
  }
  socket.destroy()
}

/**
 * When the application sets its server up (`app.listen`, or `app.setup(server)`), requests Node cannot read
 * are answered as Feathers error JSON. Where the application listens for `clientError` too, before or after,
 * its listener answers them.
 */
export function answerClientErrors(app: Application) {
  app.hooks({
    setup: [
      async (context: { server?: Server }, next: () => Promise<void>) => {
        const server = context.server
        if (
          server &&
          typeof server.on === 'function' &&
          !server.listeners('clientError').includes(answerClientError)
        ) {
          server.on('clientError', answerClientError)
        }
        await next()
      }
    ]
  })
}
