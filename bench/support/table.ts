/** Prints rows of cells (the first row the header) as columns, each two wider than its widest cell. */
export function printTable(table: string[][]) {
  const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)) + 2)
  console.log(
    '\n' + table.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('')).join('\n')
  )
}
