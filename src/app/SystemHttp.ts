import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { dashboardOpenApi, publicOpenApi, ServerApi } from "../api.js"
import { ServiceUnavailable } from "../platform/HttpErrors.js"
import { Database } from "../platform/Sql.js"

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
      .handle("dashboardOpenapi", () => Effect.succeed(dashboardOpenApi))
  }))
