import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { Brands } from "../brands/Brands.js"
import { ServerApi } from "../api.js"
import { notImplemented } from "../platform/HttpErrors.js"

/**
 * Until its issue lands, a per-brand endpoint still checks the brand (404 for an unknown
 * slug or another account's), then answers 501: nothing pretends to work.
 */
const pendingForBrand = (slug: string) =>
  Effect.flatMap(Effect.all([Brands, CurrentAccount]), ([brands, { accountId }]) => brands.row(accountId, slug)).pipe(
    Effect.zipRight(Effect.fail(notImplemented))
  )

export const AgentsLive = HttpApiBuilder.group(ServerApi, "agents", (handlers) =>
  handlers
    .handle("dashboard", ({ path }) => pendingForBrand(path.slug))
    .handle("pages", ({ path }) => pendingForBrand(path.slug))
    .handle("searchPerformance", ({ path }) => pendingForBrand(path.slug))
    .handle("attribution", ({ path }) => pendingForBrand(path.slug))
)
