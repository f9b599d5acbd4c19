import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Stream } from "effect"

/** A SqlClient over another whose every connection is `wrap` of the other's (the tests' fault injections). */
export const wrappedSql = (wrap: (conn: Connection) => Connection) => (inner: SqlClient.SqlClient): SqlClient.SqlClient =>
  Effect.runSync(
    SqlClient.make({
      acquirer: Effect.map(inner.reserve, wrap),
      transactionAcquirer: Effect.map(inner.reserve, wrap),
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    }).pipe(Effect.provide(Reactivity.layer))
  )

/**
 * A SqlClient over another whose every statement first runs `check` (given the statement's text when it
 * is a function): tests switch it to fail (an outage) or to die (a bug) and back, or hold statements,
 * without touching the database itself.
 */
export const gatedSql = (check: Effect.Effect<void, SqlError> | ((sql: string) => Effect.Effect<void, SqlError>)) => {
  const checkOf = (sql: string) => (typeof check === "function" ? check(sql) : check)
  return wrappedSql((conn) => ({
    execute: (sql, params, transform) => Effect.zipRight(checkOf(sql), conn.execute(sql, params, transform)),
    executeRaw: (sql, params) => Effect.zipRight(checkOf(sql), conn.executeRaw(sql, params)),
    executeValues: (sql, params) => Effect.zipRight(checkOf(sql), conn.executeValues(sql, params)),
    executeUnprepared: (sql, params, transform) => Effect.zipRight(checkOf(sql), conn.executeUnprepared(sql, params, transform)),
    executeStream: (sql, params, transform) => Stream.unwrap(Effect.as(checkOf(sql), conn.executeStream(sql, params, transform)))
  }))
}
