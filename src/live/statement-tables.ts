import type { ResolvedResource } from '../resource/resolved'
import type { RecordedReads } from './read-recorder'

/** Statement texts whose tables are known, at most; more start the record afresh. */
const TEXTS_KEPT = 1000

/**
 * Which services' writes may change what a computation read: those of every resource whose table a statement
 * names (its own, and those its relation filters, sorts and joins reach), found in the SQL text by the table's
 * quoted name. Naming a table too many (an alias spelled like one) costs a computation, never a missed write.
 */
export class StatementTables {
  private readonly pathsOfText = new Map<string, readonly string[]>()

  constructor(private readonly resources: () => readonly ResolvedResource[]) {}

  of(reads: RecordedReads): Set<string> {
    const paths = new Set(reads.resources)
    for (const sql of reads.sql) for (const path of this.pathsIn(sql)) paths.add(path)
    return paths
  }

  private pathsIn(sql: string): readonly string[] {
    let paths = this.pathsOfText.get(sql)
    if (!paths) {
      paths = this.resources()
        .filter((resource) => {
          const table = resource.table.split('.').at(-1)!
          return sql.includes(`\`${table}\``) || sql.includes(`"${table}"`)
        })
        .map((resource) => resource.basePath)
      if (this.pathsOfText.size >= TEXTS_KEPT) this.pathsOfText.clear()
      this.pathsOfText.set(sql, paths)
    }
    return paths
  }
}
