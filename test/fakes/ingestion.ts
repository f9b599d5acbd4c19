import { Effect, Layer } from "effect"
import { type HitRow, HitsRepo, type ReferralRow, type Stored, UsageOverCap } from "../../src/ingestion/HitsRepo.js"
import { QuotaRepo } from "../../src/ingestion/QuotaRepo.js"
import { makeFakeTimePartitions } from "./partitions.js"

/**
 * In-memory HitsRepo and QuotaRepo with the contracts of the SQL ones: keys are stored once, the
 * rollup counts what was newly stored, usage grows by the hits stored, and withinCap holds one
 * lock (per process: enough for one JS thread) across the read of the room and the store.
 * `monthly` is the fake AccountsRepo's usage map ("<accountId>:<YYYY-MM-01>" -> events).
 */
export interface FakeHitsStore {
  readonly hits: Array<HitRow & { accountId: number; brandId: number; channel: string; unauthenticated: boolean }>
  readonly rollup: Map<string, number>
  readonly referrals: Array<ReferralRow & { accountId: number; brandId: number; channel: string }>
}

export const makeFakeIngestionRepos = (monthly: Map<string, number>) => {
  const store: FakeHitsStore = { hits: [], rollup: new Map(), referrals: [] }
  const hitKeys = new Set<string>()
  const referralKeys = new Set<string>()

  const hits = Layer.succeed(HitsRepo, {
    store: (input) =>
      Effect.suspend((): Effect.Effect<Stored, UsageOverCap> => {
        const fresh = input.hits.slice(0, Math.max(0, input.limit)).filter((hit, i, all) =>
          !hitKeys.has(`${input.brandId}|${hit.key}`) && all.findIndex((other) => other.key === hit.key) === i
        )
        const usageKey = `${input.accountId}:${input.month}`
        // The usage row's guard (migrations/0007): over the cap, nothing is stored.
        if (input.cap !== null && fresh.length > 0 && (monthly.get(usageKey) ?? 0) + fresh.length > input.cap) {
          return Effect.fail(new UsageOverCap())
        }
        let stored = 0
        for (const hit of fresh) {
          hitKeys.add(`${input.brandId}|${hit.key}`)
          store.hits.push({
            ...hit,
            accountId: input.accountId,
            brandId: input.brandId,
            channel: input.channel,
            unauthenticated: input.unauthenticated === true
          })
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
        if (stored === 0 || input.countUsage === false) return Effect.succeed({ stored, used: null })
        const used = (monthly.get(usageKey) ?? 0) + stored
        monthly.set(usageKey, used)
        return Effect.succeed({ stored, used })
      }),
    spoofedCounts: (brands, since, min) =>
      Effect.sync(() => {
        const counts = new Map<string, { accountId: number; brandId: number; bot: string; spoofed: number }>()
        for (const hit of store.hits) {
          if (hit.verification !== "spoofed" || hit.ts < since.getTime()) continue
          if (!brands.some((b) => b.accountId === hit.accountId && b.brandId === hit.brandId)) continue
          const key = `${hit.brandId}|${hit.bot}`
          const count = counts.get(key) ?? { accountId: hit.accountId, brandId: hit.brandId, bot: hit.bot, spoofed: 0 }
          count.spoofed++
          counts.set(key, count)
        }
        return [...counts.values()].filter((c) => c.spoofed >= min)
      })
  })

  const quota = Layer.effect(
    QuotaRepo,
    Effect.map(Effect.makeSemaphore(1), (lock) => ({
      used: (accountId: number, month: string) => Effect.sync(() => monthly.get(`${accountId}:${month}`) ?? 0),
      withinCap: (accountId, month, cap, _offered, storeHits) =>
        lock.withPermits(1)(
          Effect.gen(function*() {
            const before = monthly.get(`${accountId}:${month}`) ?? 0
            const room = Math.max(0, cap - before)
            const { stored } = yield* storeHits(room).pipe(Effect.orDie)
            return { room, stored, used: before + stored }
          })
        )
    }))
  )

  const forget = (table: string, key: string) => void (table === "crawler_hits" ? hitKeys : referralKeys).delete(key)
  return { layer: Layer.mergeAll(hits, quota, makeFakeTimePartitions(store, forget)), store }
}
