import { HttpApiBuilder } from "@effect/platform"
import { BunRuntime } from "@effect/platform-bun"
import { Effect, Layer, Logger } from "effect"
import { ApiLive, makeServices, RepositoriesLive } from "./Layers.js"
import { AppConfig, AppConfigLive, configSummary } from "../platform/Config.js"
import { MigratedSqlLive } from "../platform/Migrations.js"
import { BUN_BODY_LIMIT } from "../platform/BodyCap.js"
import { layerListenWhenReady } from "../platform/ListenWhenReady.js"
import { BUN_HEADER_LIMIT, bunHeaderLimit, MAX_HEADER_BYTES } from "../platform/HeaderCap.js"
import { GracefulShutdownLive } from "./Shutdown.js"
import { DemoOnStartLive } from "./DemoOnStart.js"
import { ScannerLive } from "../observations/Scanner.js"

/** The HTTP server: config, database (migrated at start), services, the API, Bun. */
export const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    // Built after the server, so at SIGTERM it runs first: stop accepting, finish in-flight requests,
    // flush the drain spool and the last-used writes; then the server, services and pool close.
    GracefulShutdownLive.pipe(
      Layer.provide(
        HttpApiBuilder.serve().pipe(
          Layer.provide(ApiLive),
          Layer.tap(() => Effect.logInfo(`listening on http://${config.host}:${config.port}`))
        )
      ),
      // Before listening: the demo workspace when DEMO=1, then the scanner fiber.
      Layer.provide(ScannerLive),
      Layer.provide(DemoOnStartLive),
      Layer.provide(makeServices({ repositories: RepositoriesLive })),
      Layer.provide(
        // The port is bound only when the app is installed: never a 404 that is not the app's (docs/security.md).
        layerListenWhenReady({ port: config.port, hostname: config.host, maxRequestBodySize: BUN_BODY_LIMIT })
      ),
      // The effective settings, secrets redacted.
      Layer.tap(() => Effect.logInfo("configuration").pipe(Effect.annotateLogs(configSummary(config)))),
      // Started otherwise than by `bun run start`: Bun itself answers over-long headers with a bare 431.
      Layer.tap(() =>
        bunHeaderLimit() > MAX_HEADER_BYTES ? Effect.void : Effect.logWarning(
          `Bun's header limit is ${bunHeaderLimit()} bytes: over-long headers get Bun's bare 431, not the app's JSON ` +
            `error; start with \`bun run start\` (bun --max-http-header-size=${BUN_HEADER_LIMIT})`
        )
      )
    ))
).pipe(Layer.provide(MigratedSqlLive), Layer.provide(AppConfigLive))

if (import.meta.main) {
  // Every log line is one JSON object on stdout (the request lines too: src/platform/RequestLog.ts).
  BunRuntime.runMain(Layer.launch(ServerLive).pipe(Effect.provide(Logger.json)), { disablePrettyLogger: true })
}
