/** A numeric command-line flag of a bench (`--seconds 5`), or `fallback` when it is not given. */
export function flag(name: string, fallback: number) {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}

/** What the load benches take: the rows seeded, each round's length and count, and autocannon's connections. */
export function loadFlags(defaults: { seconds: number; rounds: number }) {
  return {
    items: flag('items', 10_000),
    seconds: flag('seconds', defaults.seconds),
    rounds: Math.max(1, flag('rounds', defaults.rounds)),
    connections: flag('connections', 20)
  }
}
