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

export const VisibilityLive = HttpApiBuilder.group(ServerApi, "visibility", (handlers) =>
  handlers
    .handle("snapshots", ({ path }) => pendingForBrand(path.slug))
    .handle("mentions", ({ path }) => pendingForBrand(path.slug))
    .handle("prompts", ({ path }) => pendingForBrand(path.slug))
    .handle("portfolio", () => Effect.fail(notImplemented))
    .handle("model", () => Effect.fail(notImplemented))
    .handle("topics", () => Effect.fail(notImplemented))
)

export const CitationsLive = HttpApiBuilder.group(ServerApi, "citations", (handlers) =>
  handlers
    .handle("citations", () => Effect.fail(notImplemented))
    .handle("fanouts", () => Effect.fail(notImplemented))
)

export const IndustryLive = HttpApiBuilder.group(ServerApi, "industry", (handlers) =>
  handlers
    .handle("metrics", () => Effect.fail(notImplemented))
    .handle("competitorCitations", () => Effect.fail(notImplemented))
    .handle("competitorPrompts", () => Effect.fail(notImplemented))
    .handle("gap", () => Effect.fail(notImplemented))
    .handle("ranking", () => Effect.fail(notImplemented))
)
