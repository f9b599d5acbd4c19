import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { type HitRow, HitsRepo, type StoreInput } from "../../src/ingestion/HitsRepo.js"
import { monthStart } from "../../src/platform/Days.js"
import { databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { brandIds, storedCounts, tenant } from "./fixtures.js"

/**
 * Stores of one brand that come while two run share the next statement (HitsRepo): each store's
 * answer is what it would have been one after the other in some order (a key offered by several is
 * counted for exactly one; each stores at most its limit), and the usage and rollups count every
 * hit once.
 */
for (const backend of databaseBackends()) {
  describe(`stores sharing a statement on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    it("a key offered by several stores is stored and counted once, limits hold, usage and rollups count each hit once", async () => {
      const t = await tenant(app, "growth")
      const { account, brand } = await brandIds(app, t.siteId)
      const now = Date.now()
      const hit = (n: number): HitRow => ({
        recordId: `k${n}`,
        key: `r:k${n}`,
        ts: now - n * 1000,
        method: "GET",
        host: "www.acme.com",
        path: `/grouped/${n % 3}`,
        query: "",
        ua: "GPTBot",
        referrer: "",
        status: 200,
        clientIp: null,
        country: null,
        bot: "GPTBot",
        vendor: "OpenAI",
        kind: "training_crawler"
      })
      const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => hit(from + i))
      const input = (hits: ReadonlyArray<HitRow>, limit = hits.length): StoreInput => ({
        accountId: account,
        brandId: brand,
        channel: "api",
        month: monthStart(new Date(now)),
        hits,
        limit,
        cap: 1_000_000,
        referrals: [],
        receivedAt: now + 1
      })
      // Two stores run at once and the rest wait and share a statement, in whatever order the
      // database takes them: each answer is exact whatever that order.
      const stores = [
        input(range(0, 10)),
        input(range(100, 105)),
        input(range(20, 30)),
        input(range(25, 35)), // 25..29 offered twice
        input([...range(40, 50), ...range(40, 50)], 4), // a key twice in one store; at most 4
        input(range(20, 25)) // offered before
      ]
      const results = await app.run(Effect.flatMap(HitsRepo, (repo) => Effect.all(stores.map((s) => repo.store(s)), { concurrency: "unbounded" })))
      const stored = results.map((r) => r.stored)
      expect(stored[0]).toBe(10)
      expect(stored[1]).toBe(5)
      expect(stored[4]).toBe(4)
      // Keys 20..34, offered by three stores: each stored once, counted for exactly one of them.
      expect(stored[2]! + stored[3]! + stored[5]!).toBe(15)
      expect(stored[3]).toBeGreaterThanOrEqual(5)
      expect(await storedCounts(app, brand)).toEqual({ hits: 34, rollup: 34, daily: 34, used: 34 })
      expect(Math.max(...results.map((r) => r.used ?? 0))).toBe(34)
    })
  })
}
