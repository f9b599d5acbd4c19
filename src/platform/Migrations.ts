import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect, Layer } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { SqlLive } from "./Sql.js"

/** migrations/NNNN_name.sql, the same SQL for the server and the embedded database. */
export const migrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url))

const loader: Migrator.Loader = Effect.try({
  try: () =>
    readdirSync(migrationsDir)
      .flatMap((file) => {
        const match = /^(\d+)_(.+)\.sql$/.exec(file)
        return match === null ? [] : [{ file, id: match[1]!, name: match[2]! }]
      })
      .map(({ file, id, name }): Migrator.ResolvedMigration => {
        const text = readFileSync(`${migrationsDir}/${file}`, "utf8")
        return [
          Number(id),
          name,
          // Migrations run in one transaction: no statement timeout for it (an index on a large table takes long).
          Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.zipRight(sql.unsafe("set local statement_timeout = 0").raw, sql.unsafe(text).raw)))
        ]
      })
      .sort((a, b) => a[0] - b[0]),
  catch: (cause) => new Migrator.MigrationError({ reason: "import-error", message: `Cannot read ${migrationsDir}`, cause })
})

/** Applies pending migrations; returns the ones applied. */
export const runMigrations = Migrator.make({})({ loader, table: "schema_migrations" })

/** The configured database (SqlLive: SqlClient and Database) with every migration applied before anything uses it. */
export const MigratedSqlLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`) : Effect.void
    )
  )
).pipe(Layer.provideMerge(SqlLive))
