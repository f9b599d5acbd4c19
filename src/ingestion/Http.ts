import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServerApi } from "../api.js"
import { notImplemented } from "../platform/HttpErrors.js"

export const IngestionLive = HttpApiBuilder.group(ServerApi, "ingestion", (handlers) =>
  handlers
    .handle("ingest", () => Effect.fail(notImplemented))
    .handleRaw("drain", () => Effect.fail(notImplemented))
)
