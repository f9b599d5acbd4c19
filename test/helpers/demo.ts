import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { PasswordHasherCheap } from "../../src/accounts/Passwords.js"
import { agentsConfigTest } from "../../src/agents/Config.js"
import { type DemoOptions, runDemo } from "../../src/app/Demo.js"
import { makeServices, type Repositories } from "../../src/app/Layers.js"
import { ingestionConfigTest } from "../../src/ingestion/Config.js"
import { appConfigTest } from "../../src/platform/Config.js"
import type { Database } from "../../src/platform/Sql.js"
import { visibilityConfigTest } from "../../src/visibility/Visibility.js"
import type { TestApp } from "./app.js"

/**
 * Runs the demo workspace on the app's own database (its repositories and SQL client, the services built as the
 * server builds them); returns the API key the demo prints.
 */
export const seedDemo = async (app: TestApp, options: DemoOptions): Promise<string> => {
  const context = await app.run(Effect.context<Repositories | Database>())
  const sql = Option.getOrThrow(await app.run(Effect.serviceOption(SqlClient.SqlClient)))
  const base = Layer.succeedContext(context).pipe(Layer.merge(Layer.succeed(SqlClient.SqlClient, sql)))
  const services = makeServices({
    repositories: Layer.succeedContext(context),
    passwords: PasswordHasherCheap,
    ingestionConfig: ingestionConfigTest(),
    visibilityConfig: visibilityConfigTest(),
    agentsConfig: agentsConfigTest()
  }).pipe(Layer.provideMerge(base), Layer.provideMerge(appConfigTest()))
  const runtime = ManagedRuntime.make(Layer.orDie(services))
  try {
    return (await runtime.runPromise(runDemo(options))).apiKey
  } finally {
    await runtime.dispose()
  }
}
