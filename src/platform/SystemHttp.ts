import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { PublicApi, ServerApi } from "../api.js"
import { ServiceUnavailable } from "./HttpErrors.js"
import { Database } from "./Sql.js"

/** Built once: the public API's OpenAPI 3.1 document (spec version label in info.version). */
export const publicOpenApi = OpenApi.fromApi(PublicApi)

export const SystemHttpLive = HttpApiBuilder.group(ServerApi, "system", (handlers) =>
  Effect.gen(function*() {
    const database = yield* Database
    return handlers
      .handle("healthz", () =>
        database.ping.pipe(
          Effect.as({ status: "ok" as const, database: database.kind }),
          Effect.catchAllCause(() => Effect.fail(new ServiceUnavailable({ error: "database unavailable" })))
        ))
      .handle("openapi", () => Effect.succeed(publicOpenApi))
  }))
