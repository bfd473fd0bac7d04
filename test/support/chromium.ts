import { existsSync } from 'node:fs'

/** Debian's Chromium; `.ci/run` installs it. Playwright's own browser downloads cannot reach their hosts here. */
export const CHROMIUM = '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run'
]

/** Skips the suite where there is no Chromium, unless CI requires one. */
export function requireChromium(context: Mocha.Context) {
  if (existsSync(CHROMIUM)) return
  // CI (.ci/run) installs Chromium and says so: there, a missing browser is a failure, not a skip.
  if (process.env.FQ_REQUIRE_BROWSER)
    throw new Error(`No browser at ${CHROMIUM}, and FQ_REQUIRE_BROWSER is set`)
  console.log(
    `    (skipped: no browser at ${CHROMIUM}; install Debian's chromium package to run these tests)`
  )
  context.skip()
}
