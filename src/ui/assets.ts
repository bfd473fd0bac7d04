import { createReadStream, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Context, Next } from '../common/koa'
import { ConfigurationError } from '../common/errors'

/** A file of an installed npm package, or a text generated at start-up. */
export type Asset = { file: string } | { text: string }

/**
 * A function giving the absolute path of a file inside one of `packages`, found the way `require` finds the
 * package. Each comes with the versions the page works with; the plugin does not install them (graphiql and
 * swagger-ui-dist are optional peer dependencies; React is graphiql's), an application that mounts the page
 * does. Checked at start-up, so that a page whose packages are missing, or of a version without the file
 * (React 19 has no UMD build), stops start-up with the command that installs them.
 */
export function pageFiles<P extends string>(page: string, packages: Record<P, string>) {
  const install = `npm install ${Object.entries<string>(packages)
    .map(([name, range]) => `${name}@${range}`)
    .join(' ')}`
  const directories = new Map<string, string>()
  const missing: string[] = []
  for (const name of Object.keys(packages)) {
    try {
      directories.set(name, dirname(require.resolve(`${name}/package.json`)))
    } catch {
      missing.push(name)
    }
  }
  if (missing.length > 0) {
    throw new ConfigurationError(`The ${page} page needs ${missing.join(', ')}, not installed: ${install}`)
  }
  return (name: P, file: string) => {
    const path = join(directories.get(name)!, file)
    if (!existsSync(path)) {
      // The installed version of an optional peer, read only to say which one lacks the file.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { version } = require(`${name}/package.json`) as { version: string }
      throw new ConfigurationError(
        `The ${page} page needs ${name}@${packages[name]}; version ${version} has no ${file}: ${install}`
      )
    }
    return path
  }
}

/**
 * A Content-Security-Policy that keeps a page on this server: scripts, styles and fonts from here only (inline
 * styles and data: URLs are what the bundles use), and requests to here or to `connectTo`. A page that tried
 * to reach a CDN would be stopped by the browser, not only caught by a test.
 */
export function sameOriginPolicy(connectTo: string[] = []) {
  const origins = connectTo.filter((url) => /^https?:\/\//.test(url)).map((url) => new URL(url).origin)
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src ${["'self'", ...origins].join(' ')}`,
    "base-uri 'self'",
    "object-src 'none'"
  ].join('; ')
}

/**
 * Serves `index.html` at `mount/` (with `mount` redirected there, so that relative asset URLs work behind a
 * path prefix too) and every other asset at `mount/<name>`. Only the named assets are served: nothing else
 * of the package directories is reachable.
 */
export function assetMiddleware(mount: string, assets: Record<string, Asset>, policy: string) {
  const base = '/' + mount.replace(/^\/+|\/+$/g, '')
  // Not async: every API request passes through here, and a pass-through needs no promise of its own.
  return (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    if (ctx.path === base) {
      ctx.redirect(`${base}/${ctx.search}`)
      return
    }
    if (!ctx.path.startsWith(`${base}/`)) return next()
    const name = ctx.path.slice(base.length + 1) || 'index.html'
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined
    if (!asset) return next()
    ctx.type = name.slice(name.lastIndexOf('.'))
    if (name.endsWith('.html')) ctx.set('Content-Security-Policy', policy)
    ctx.body = 'file' in asset ? createReadStream(asset.file) : asset.text
  }
}

function escapeHtml(text: string) {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

export interface PageOptions {
  title: string
  stylesheets: string[]
  /** The id of the element the application renders into. */
  rootId: string
  scripts: string[]
  /** Extra CSS for the page itself. */
  style?: string
}

/** The HTML page of a browser tool: its stylesheets, one root element, its scripts in order, all relative. */
export function pageHtml(options: PageOptions) {
  const links = options.stylesheets.map((href) => `    <link rel="stylesheet" href="${href}" />\n`).join('')
  const style = options.style ? `    <style>${options.style}</style>\n` : ''
  const scripts = options.scripts.map((src) => `    <script src="${src}"></script>\n`).join('')
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="data:," /><!-- no /favicon.ico request -->
${style}${links}  </head>
  <body>
    <div id="${options.rootId}"></div>
${scripts}  </body>
</html>
`
}
