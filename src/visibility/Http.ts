import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServerApi } from "../api.js"
import { notImplemented } from "../platform/HttpErrors.js"

export const VisibilityLive = HttpApiBuilder.group(ServerApi, "visibility", (handlers) =>
  handlers
    .handle("snapshots", () => Effect.fail(notImplemented))
    .handle("mentions", () => Effect.fail(notImplemented))
    .handle("prompts", () => Effect.fail(notImplemented))
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
