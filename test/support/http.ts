/** A small HTTP client for tests: JSON in, parsed JSON (or text) out, never throws on 4xx/5xx. */
export interface HttpResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export type Http = <T = any>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>
) => Promise<HttpResponse<T>>

export function httpClient(baseUrl: string): Http {
  return async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } }
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
    }
    const response = await fetch(baseUrl + path, init)
    const text = await response.text()
    let parsed: any = text
    if ((response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text)
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
}
