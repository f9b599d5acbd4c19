import { Effect, Layer } from "effect"
import { NO_POPULATION, VisibilityRepo } from "../../src/visibility/Repo.js"

/** What the fake visibility repository reads of the shared in-memory store. */
export interface VisibilityStoreView {
  readonly prompts: ReadonlyArray<{
    id: string
    num: number
    accountId: number
    brandId: number
    prompt: string
    topic: string
    intent: string
    source: string
    sourceQuery: string
    createdAt: Date
  }>
  readonly maxPrompts: (accountId: number) => number
}

/**
 * In-memory VisibilityRepo for the "fake" back end. It answers the catalogue reads (monitored
 * prompts, topics) from the store; it holds no rollups, so every aggregate is the empty one
 * (zeros, empty arrays). The figures are tested on the database back ends (test/visibility/reads.test.ts).
 */
export const makeFakeVisibilityRepo = (view: VisibilityStoreView) =>
  Layer.succeed(VisibilityRepo, {
    promptList: (accountId, brandId) =>
      Effect.sync(() => ({
        prompts: view.prompts
          .filter((p) => p.accountId === accountId && p.brandId === brandId)
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.num - b.num),
        usedTotal: view.prompts.filter((p) => p.accountId === accountId).length,
        limit: view.maxPrompts(accountId)
      })),
    topics: (accountId) =>
      Effect.sync(() => {
        const mine = view.prompts.filter((p) => p.accountId === accountId)
        const counts = new Map<string, number>()
        for (const p of mine) counts.set(p.topic, (counts.get(p.topic) ?? 0) + 1)
        return { themes: [...counts].map(([topic, count]) => ({ topic, count })), texts: mine.map((p) => p.prompt) }
      }),
    dayEngineTotals: () => Effect.succeed([]),
    dayEntityTotals: () => Effect.succeed([]),
    mentions: () => Effect.succeed([]),
    portfolioEngines: () => Effect.succeed([]),
    portfolioCompetitors: () => Effect.succeed([]),
    engineTotals: () => Effect.succeed([]),
    workspaceDomains: () => Effect.succeed([]),
    brandDomains: () => Effect.succeed([]),
    fanoutGroups: () => Effect.succeed([]),
    entityTotals: () => Effect.succeed({ entities: [], population: NO_POPULATION }),
    topicEntityTotals: () => Effect.succeed({ entities: [], population: NO_POPULATION }),
    series: () => Effect.succeed({ days: [], competitors: [] }),
    lastObserved: () => Effect.succeed(null),
    competitorDomains: () => Effect.succeed([]),
    competitorPrompts: () => Effect.succeed([]),
    gap: () => Effect.succeed([]),
    promptEntityCounts: () => Effect.succeed({ prompts: [], entities: [] }),
    topicGap: () => Effect.succeed([]),
    mentionCounts: () => Effect.succeed([]),
    citationChanges: () => Effect.succeed([])
  })
