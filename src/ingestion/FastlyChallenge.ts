import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { IngestionConfig } from "./Config.js"

/**
 * Fastly checks an HTTPS logging endpoint before it sends logs: a GET of this path on the
 * endpoint's host must answer 200 with the hex SHA-256 of the Fastly service id on a line of its
 * own, or a line `*` for any service (Fastly's "Log streaming: HTTPS" guide). With
 * FASTLY_SERVICE_IDS set, only those services are named; without, `*`: the API key and site_id
 * of each delivery are what protect the drain, not this check.
 */
export const FASTLY_CHALLENGE_PATH = "/.well-known/fastly/logging/challenge"

export const fastlyChallengeBody = (serviceIds: ReadonlyArray<string>): string =>
  serviceIds.length === 0
    ? "*\n"
    : serviceIds.map((id) => createHash("sha256").update(id).digest("hex")).join("\n") + "\n"

export const FastlyChallengeLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* IngestionConfig
    const body = fastlyChallengeBody(config.fastlyServiceIds)
    yield* router.get(
      FASTLY_CHALLENGE_PATH,
      Effect.succeed(HttpServerResponse.text(body, { headers: { "cache-control": "no-store" } }))
    )
  })
)
