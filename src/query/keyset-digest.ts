import { createHash } from 'node:crypto'

/**
 * What keyset cursors and export resume tokens are bound with: a short digest of what they were made for.
 * No secret: a token's values are only ever compared with sort columns, as bound parameters, inside the
 * request's filter and the caller's authorization, so a token changed by hand selects nothing more.
 */
export const keysetDigest = (text: string) =>
  createHash('sha256').update(text).digest('base64url').slice(0, 16)

/** JSON with object keys sorted (and undefined members left out), so that `{a, b}` and `{b, a}` are one filter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
