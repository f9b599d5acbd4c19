import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServerApi } from "../api.js"
import { AgentCatalog } from "./AgentCatalog.js"

/** GET /api/v1/catalog: the session is checked by SessionAuth; the answer is the same for every account. */
export const CatalogHttpLive = HttpApiBuilder.group(ServerApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* AgentCatalog
    return handlers.handle("list", () => catalog.list)
  }))
