import { dirname, join, sep } from 'node:path'

/**
 * Refuses to measure the plugin's sources instead of its build: a benchmark started without bench/index.ts
 * (which builds lib/ and points tsx at bench/tsconfig.json) would load src/ through the root tsconfig's path
 * mapping, compiled on the fly by tsx, and report figures no application sees.
 */
export function assertCompiledPlugin() {
  const loaded = require.resolve('feathers-query')
  const lib = join(dirname(__dirname), '..', 'lib') + sep
  if (!loaded.startsWith(lib)) {
    throw new Error(
      `The benchmark loaded ${loaded}, not the build in lib/: run it as npm run bench or bench:<name>`
    )
  }
}
