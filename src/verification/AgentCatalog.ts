import { Context, Effect, Layer } from "effect"
import { Classifier, ClassifierLive } from "../catalog/Classifier.js"
import type { CatalogResponse } from "./Api.js"
import { Verification, VerificationLive } from "./Verification.js"

/**
 * The catalog as the dashboard shows it (docs/verification.md, "Where it shows"): every agent with the
 * verification methods its operator publishes. The methods come from the Verification service, so they
 * follow the range snapshot in use: after `cli ranges update` an agent a new file names shows
 * ip_ranges without a restart, as its verdicts do.
 */

export interface AgentCatalogShape {
  readonly list: Effect.Effect<typeof CatalogResponse.Type>
}

export class AgentCatalog extends Context.Tag("AgentCatalog")<AgentCatalog, AgentCatalogShape>() {}

export const AgentCatalogLive = Layer.effect(
  AgentCatalog,
  Effect.gen(function*() {
    const { agents, version } = yield* Classifier
    const verification = yield* Verification
    return AgentCatalog.of({
      // Read on each call: the snapshot (and so the methods) can change under a running server.
      list: Effect.sync(() => ({
        version,
        ranges_snapshot: verification.snapshot().date,
        agents: agents.map((a) => ({
          bot: a.bot,
          vendor: a.vendor,
          kind: a.kind,
          docs_url: a.docs === "" ? null : a.docs,
          robots_only: a.robots_only === true,
          verification_methods: verification.methodsOf(a.bot)
        })),
        count: agents.length
      }))
    })
  })
).pipe(Layer.provide([ClassifierLive, VerificationLive]))
