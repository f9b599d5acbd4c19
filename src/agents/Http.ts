import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServerApi } from "../api.js"
import { notImplemented } from "../platform/HttpErrors.js"

export const AgentsLive = HttpApiBuilder.group(ServerApi, "agents", (handlers) =>
  handlers
    .handle("dashboard", () => Effect.fail(notImplemented))
    .handle("pages", () => Effect.fail(notImplemented))
    .handle("searchPerformance", () => Effect.fail(notImplemented))
    .handle("attribution", () => Effect.fail(notImplemented))
)
