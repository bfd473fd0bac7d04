import { parse } from 'csv-parse/sync'

/**
 * A CSV export read back with a real CSV parser (quoted commas, doubled quotes and line breaks inside cells
 * included): its header row and its records by column name, every cell as text.
 */
export function parseCsv(text: string): { header: string[]; records: Array<Record<string, string>> } {
  const [header = [], ...rows]: string[][] = parse(text)
  return {
    header,
    records: rows.map((row) => Object.fromEntries(header.map((name, index) => [name, row[index]])))
  }
}
