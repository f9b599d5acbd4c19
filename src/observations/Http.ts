import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { badRequest } from "../platform/HttpErrors.js"
import { Observations } from "./Observations.js"

export const ObservationsHttpLive = HttpApiBuilder.group(ServerApi, "observations", (handlers) =>
  Effect.gen(function*() {
    const observations = yield* Observations
    return handlers
      .handleRaw("import", ({ path }) =>
        Effect.gen(function*() {
          const { accountId } = yield* CurrentUser
          const request = yield* HttpServerRequest.HttpServerRequest
          const body = yield* request.arrayBuffer.pipe(Effect.mapError(() => badRequest("cannot read the request body")))
          return yield* observations.importBody(accountId, path.slug, new Uint8Array(body))
        }))
      .handle("scans", ({ path }) => Effect.flatMap(CurrentUser, ({ accountId }) => observations.scanStatus(accountId, path.slug)))
  }))
