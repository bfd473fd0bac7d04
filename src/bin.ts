#!/usr/bin/env node
/** The `feathers-query` command: `npx feathers-query migration src/app.ts [--diff] [--name x]`. */
import { CommandError, migrationCommand, USAGE } from './migration/command'

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command !== 'migration') {
    console.error(USAGE)
    return command === undefined || command === '--help' ? 0 : 1
  }
  try {
    await migrationCommand(rest, process.cwd(), (line) => console.log(line))
    return 0
  } catch (error) {
    console.error(error instanceof CommandError ? error.message : error)
    return 1
  }
}

// The application's modules may leave timers or connections open (a socket.io server, a pool): the command
// is done when its file is written.
main(process.argv.slice(2)).then((code) => process.exit(code))
