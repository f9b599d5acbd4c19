import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { PasswordHasherCheap } from "../../src/accounts/Passwords.js"
import { makeServices, RepositoriesLive } from "../../src/app/Layers.js"
import { appConfigTest } from "../../src/platform/Config.js"
import { runMigrations } from "../../src/platform/Migrations.js"
import { SqlMemory, sqlServer } from "../../src/platform/Sql.js"
import { serverSchemaUrl } from "../helpers/app.js"

/** The domain services and repositories (no HTTP) on a database back end, with SqlClient for checks. */
export const makeServiceRuntime = async (backend: "fake" | "pglite" | "postgres") => {
  if (backend === "fake") throw new Error("the service runtime needs a database back end")
  const sql = backend === "pglite" ? SqlMemory : sqlServer(await serverSchemaUrl(process.env.TEST_DATABASE_URL!))
  const database = Layer.effectDiscard(runMigrations.pipe(Effect.orDie)).pipe(Layer.provideMerge(sql))
  const layer = makeServices({ repositories: RepositoriesLive, passwords: PasswordHasherCheap }).pipe(
    Layer.provideMerge(RepositoriesLive),
    Layer.provideMerge(database),
    Layer.provideMerge(appConfigTest())
  )
  return ManagedRuntime.make(Layer.orDie(layer))
}

export type ServiceRuntime = Awaited<ReturnType<typeof makeServiceRuntime>>

export const query = <A extends object>(text: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)).pipe(Effect.orDie)
