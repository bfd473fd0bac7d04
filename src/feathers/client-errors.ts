import type { Application } from '@feathersjs/koa'
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/**
 * What Node answers itself, before any middleware, to a request it cannot read, as Feathers error JSON: Node's
 * own answers (431 for headers past its limit, 400 for a malformed request, 408 for one that took too long)
 * carry no body, so a client sees a status and nothing to say why.
 */
const ANSWERS: Record<string, { code: number; reason: string; name: string; className: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 431,
    reason: 'Request Header Fields Too Large',
    name: 'RequestHeaderFieldsTooLarge',
    className: 'request-header-fields-too-large',
    message: 'The request headers are larger than the server accepts'
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    code: 413,
    reason: 'Payload Too Large',
    name: 'PayloadTooLarge',
    className: 'payload-too-large',
    message: 'The request body has chunk extensions larger than the server accepts'
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 408,
    reason: 'Request Timeout',
    name: 'Timeout',
    className: 'timeout',
    message: 'The request did not arrive in time'
  }
}

const MALFORMED = {
  code: 400,
  reason: 'Bad Request',
  name: 'BadRequest',
  className: 'bad-request',
  message: 'The request is not well-formed HTTP'
}

function answerClientError(this: Server, error: Error & { code?: string }, socket: Socket) {
  // A listener the application added (after `app.listen` returned, say) answers instead.
  if (this.listenerCount('clientError') > 1) return
  // As Node does: answer only where no response to this connection has started, then close it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const known = error.code !== undefined && Object.hasOwn(ANSWERS, error.code)
    const { code, reason, name, className, message } = known ? ANSWERS[error.code!] : MALFORMED
    const body = JSON.stringify({ name, message, code, className })
    socket.write(
      `HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
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
        if (server && typeof server.on === 'function' && !server.listeners('clientError').includes(answerClientError)) {
          server.on('clientError', answerClientError)
        }
        await next()
      }
    ]
  })
}
