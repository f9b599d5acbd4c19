import { Effect, Layer } from "effect"
import { AppConfig } from "./Config.js"
import { runMigrations } from "./Migrations.js"
import { SqlLive } from "./Sql.js"

/** The configured database with every migration applied before anything uses it. */
export const MigratedSqlLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length > 0 ? Effect.logInfo(`applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`) : Effect.void
    )
  )
).pipe(Layer.provideMerge(SqlLive))

export type { AppConfig }
