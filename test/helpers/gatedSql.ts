import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Stream } from "effect"

/**
 * A SqlClient over another whose every statement first runs `check`: tests switch it to fail
 * (an outage) or to die (a bug) and back, without touching the database itself.
 */
export const gatedSql = (check: Effect.Effect<void, SqlError>) => (inner: SqlClient.SqlClient): SqlClient.SqlClient => {
  const gate = (conn: Connection): Connection => ({
    execute: (sql, params, transform) => Effect.zipRight(check, conn.execute(sql, params, transform)),
    executeRaw: (sql, params) => Effect.zipRight(check, conn.executeRaw(sql, params)),
    executeValues: (sql, params) => Effect.zipRight(check, conn.executeValues(sql, params)),
    executeUnprepared: (sql, params, transform) => Effect.zipRight(check, conn.executeUnprepared(sql, params, transform)),
    executeStream: (sql, params, transform) => Stream.unwrap(Effect.as(check, conn.executeStream(sql, params, transform)))
  })
  return Effect.runSync(
    SqlClient.make({
      acquirer: Effect.map(inner.reserve, gate),
      transactionAcquirer: Effect.map(inner.reserve, gate),
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    }).pipe(Effect.provide(Reactivity.layer))
  )
}
