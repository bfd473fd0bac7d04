import http from 'node:http'
import type { TestServer } from './server'

/** The header of the example's todo items as an import reads them. */
export const HEADER = 'title,description,completed,priority\n'

/** `count` CSV lines numbered from `from`: `"Item <n>",,false,<n>`. */
export function numberedCsv(count: number, from = 0) {
  let text = ''
  for (let index = from; index < from + count; index++) text += `"Item ${index}",,false,${index}\n`
  return text
}

/** A POST of `body` in `chunks` pieces, the response as text; `cutAfter` destroys the request after that many. */
export function upload(
  server: TestServer,
  path: string,
  chunks: string[],
  headers: Record<string, string>,
  options: { cutAfter?: number; betweenChunks?: () => Promise<void> } = {}
) {
  return new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>(
    (resolve, reject) => {
      const request = http.request(server.baseUrl + path, { method: 'POST', headers }, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => (text += chunk))
        response.on('end', () => resolve({ status: response.statusCode!, text, headers: response.headers }))
        response.on('error', reject)
      })
      request.on('error', (error) =>
        options.cutAfter === undefined ? reject(error) : resolve({ status: 0, text: '', headers: {} })
      )
      ;(async () => {
        for (let index = 0; index < chunks.length; index++) {
          if (options.cutAfter === index) {
            request.destroy()
            return
          }
          if (!request.write(chunks[index])) await new Promise((drained) => request.once('drain', drained))
          await options.betweenChunks?.()
        }
        request.end()
      })().catch(reject)
    }
  )
}
