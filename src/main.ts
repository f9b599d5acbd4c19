import { HttpApiBuilder } from "@effect/platform"
import { BunHttpServer, BunRuntime } from "@effect/platform-bun"
import { Effect, Layer } from "effect"
import { ApiLive, makeServices, RepositoriesLive } from "./layers.js"
import { AppConfig, AppConfigLive } from "./platform/Config.js"
import { MigratedSqlLive } from "./platform/Database.js"
import { DemoOnStartLive } from "./visibility/DemoOnStart.js"
import { ScannerLive } from "./visibility/Scanner.js"

/** The HTTP server: config, database (migrated at start), services, the API, Bun. */
const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    HttpApiBuilder.serve().pipe(
      Layer.provide(ApiLive),
      // Before listening: the demo workspace when DEMO=1, then the scanner fiber (issue 6).
      Layer.provide(ScannerLive),
      Layer.provide(DemoOnStartLive),
      Layer.provide(makeServices({ repositories: RepositoriesLive })),
      Layer.provide(
        BunHttpServer.layer({ port: config.port, hostname: config.host, maxRequestBodySize: config.maxBodyBytes })
      ),
      Layer.tap(() => Effect.logInfo(`listening on http://${config.host}:${config.port}`))
    ))
).pipe(Layer.provide(MigratedSqlLive), Layer.provide(AppConfigLive))

if (import.meta.main) {
  BunRuntime.runMain(Layer.launch(ServerLive))
}
