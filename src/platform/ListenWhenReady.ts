import { HttpServer } from "@effect/platform"
import { BunHttpServer } from "@effect/platform-bun"
import { Effect, Layer } from "effect"

/**
 * The HTTP server, listening only once the app is installed (docs/security.md, "Start-up").
 *
 * BunHttpServer.layer binds the port when the layer is built and answers a plain-text 404 to every
 * request until the app is installed, which may be seconds later (migrations, services, the demo):
 * a log drain reads that 404 as "unknown site". Here the port is bound in the same step that
 * installs the app, with no yield between the two, so before it connections are refused (a
 * platform retries those) and after it every answer is the app's.
 */
export const layerListenWhenReady = (options: { readonly port: number; readonly hostname: string; readonly maxRequestBodySize: number }) =>
  Layer.mergeAll(
    Layer.succeed(
      HttpServer.HttpServer,
      HttpServer.make({
        address: { _tag: "TcpAddress", port: options.port, hostname: options.hostname },
        serve: (app, middleware) =>
          Effect.flatMap(BunHttpServer.make(options), (server) =>
            middleware === undefined ? server.serve(app) : server.serve(app, middleware)).pipe(
            // Bind and install in one run of the fiber: no scheduler yield between them.
            Effect.withMaxOpsBeforeYield(1_000_000)
          )
      })
    ),
    BunHttpServer.layerContext
  )
