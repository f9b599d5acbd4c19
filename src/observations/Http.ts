import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { badRequest } from "../platform/HttpErrors.js"
import { Accounts } from "../accounts/Accounts.js"
import { Brands } from "../brands/Brands.js"
import { Observations } from "./Observations.js"
import { ObservationsRepo } from "./Repo.js"
import { requestScan } from "./ScanRequests.js"

export const ObservationsHttpLive = HttpApiBuilder.group(ServerApi, "observations", (handlers) =>
  Effect.gen(function*() {
    const observations = yield* Observations
    const services = yield* Effect.context<Accounts | Brands | ObservationsRepo>()
    return handlers
      .handleRaw("import", ({ path }) =>
        Effect.gen(function*() {
          const { accountId } = yield* CurrentUser
          const request = yield* HttpServerRequest.HttpServerRequest
          const body = yield* request.arrayBuffer.pipe(Effect.mapError(() => badRequest("cannot read the request body")))
          return yield* observations.importBody(accountId, path.slug, new Uint8Array(body))
        }))
      .handle("scans", ({ path }) => Effect.flatMap(CurrentUser, ({ accountId }) => observations.scanStatus(accountId, path.slug)))
      .handle("requestScan", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ accountId }) => requestScan(accountId, path.slug).pipe(Effect.provide(services))))
  }))
