import { Effect, Layer } from "effect"
import { type HitRow, HitsRepo, type ReferralRow } from "../../src/ingestion/HitsRepo.js"
import { Quota } from "../../src/ingestion/Quota.js"

/**
 * In-memory HitsRepo and Quota with the contracts of the SQL ones: keys are stored once, the
 * rollup counts what was newly stored, usage grows by the hits stored, and withinCap holds one
 * lock (per process: enough for one JS thread) across the read of the room and the store.
 * `monthly` is the fake AccountsRepo's usage map ("<accountId>:<YYYY-MM-01>" -> events).
 */
export interface FakeHitsStore {
  readonly hits: Array<HitRow & { accountId: number; brandId: number; channel: string }>
  readonly rollup: Map<string, number>
  readonly referrals: Array<ReferralRow & { accountId: number; brandId: number; channel: string }>
}

export const makeFakeIngestionRepos = (monthly: Map<string, number>) => {
  const store: FakeHitsStore = { hits: [], rollup: new Map(), referrals: [] }
  const hitKeys = new Set<string>()
  const referralKeys = new Set<string>()

  const hits = Layer.succeed(HitsRepo, {
    store: (input) =>
      Effect.sync(() => {
        let stored = 0
        for (const hit of input.hits.slice(0, Math.max(0, input.limit))) {
          const key = `${input.brandId}|${hit.key}`
          if (hitKeys.has(key)) continue
          hitKeys.add(key)
          store.hits.push({ ...hit, accountId: input.accountId, brandId: input.brandId, channel: input.channel })
          const day = new Date(hit.ts).toISOString().slice(0, 10)
          const rollupKey = `${input.brandId}|${day}|${hit.path}|${hit.bot}|${hit.status}`
          store.rollup.set(rollupKey, (store.rollup.get(rollupKey) ?? 0) + 1)
          stored++
        }
        for (const referral of input.referrals) {
          const key = `${input.brandId}|${referral.key}`
          if (referralKeys.has(key)) continue
          referralKeys.add(key)
          store.referrals.push({ ...referral, accountId: input.accountId, brandId: input.brandId, channel: input.channel })
        }
        if (stored > 0) {
          const usageKey = `${input.accountId}:${input.month}`
          monthly.set(usageKey, (monthly.get(usageKey) ?? 0) + stored)
        }
        return stored
      })
  })

  const quota = Layer.effect(
    Quota,
    Effect.map(Effect.makeSemaphore(1), (lock) => ({
      used: (accountId: number, month: string) => Effect.sync(() => monthly.get(`${accountId}:${month}`) ?? 0),
      withinCap: (accountId, month, cap, storeHits) =>
        lock.withPermits(1)(
          Effect.gen(function*() {
            const before = monthly.get(`${accountId}:${month}`) ?? 0
            const room = Math.max(0, cap - before)
            const stored = yield* storeHits(room)
            return { room, stored, used: before + stored }
          })
        )
    }))
  )

  return { layer: Layer.mergeAll(hits, quota), store }
}
