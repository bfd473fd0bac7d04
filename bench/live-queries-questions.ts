/** Question `index`: half lists, half aggregates, every one counting the records a write adds. */
export function question(index: number) {
  const limit = 1 + (index % 5)
  if (index % 2 === 0) {
    return `subscription { todoItems(paging: { first: ${limit * 5} }, sorting: [{ field: id, direction: DESC }], filter: { priority: { lte: ${index} } }) { totalCount edges { node { id title priority } } } }`
  }
  const shapes = [
    'groupBy { completed } count { id }',
    'groupBy { priority } count { id } max { id }',
    'count { id } sum { priority }',
    'groupBy { completed } count { id } avg { priority }',
    'count { id } min { id } max { id }'
  ]
  return `subscription { todoItemAggregate(filter: { priority: { lte: ${index} } }) { ${shapes[index % 5]} } }`
}

/** How many records a result counts: its totalCount, or the sum of its groups' counts. */
export function countOf(data: any): number {
  if (data.todoItems) return data.todoItems.totalCount
  return data.todoItemAggregate.reduce((sum: number, group: any) => sum + group.count.id, 0)
}
