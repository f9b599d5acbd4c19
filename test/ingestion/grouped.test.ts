import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { type HitRow, HitsRepo, type StoreInput } from "../../src/ingestion/HitsRepo.js"
import { monthStart } from "../../src/platform/Days.js"
import { databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { query, tenant } from "./fixtures.js"

/**
 * Stores of one brand that come while another runs share the next statement (HitsRepo): each
 * store's answer is what it would have been one after the other (a key offered twice is the first
 * store's; each stores at most its limit), and the usage and rollups count every hit once.
 */
for (const backend of databaseBackends()) {
  describe(`stores sharing a statement on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    const ids = async (siteId: string) =>
      (await query<{ account: number; brand: number }>(app, `select account_id::int as account, id::int as brand from brands where site_id = $1`, [siteId]))[0]!

    it("keys offered twice go to the first store, limits hold, usage and rollups count each hit once", async () => {
      const t = await tenant(app, "growth")
      const { account, brand } = await ids(t.siteId)
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
      const stores = [
        input(range(0, 10)), // first: alone
        input(range(5, 15)), // 5..9 are the first's
        input(range(0, 5)), // all the first's
        input([...range(20, 30), ...range(20, 30)], 4), // a key twice in one store; at most 4
        input(range(12, 18)) // 12..14 are the second's
      ]
      const results = await app.run(Effect.flatMap(HitsRepo, (repo) => Effect.all(stores.map((s) => repo.store(s)), { concurrency: "unbounded" })))
      expect(results.map((r) => r.stored)).toEqual([10, 5, 0, 4, 3])
      const [counts] = await query<{ hits: number; rollup: number; daily: number; used: number }>(app, `
        select (select count(*)::int from crawler_hits where brand_id = $1) as hits,
               (select sum(hits)::int from crawler_rollup where brand_id = $1) as rollup,
               (select sum(hits)::int from crawler_daily where brand_id = $1) as daily,
               (select events::int from monthly_usage where account_id = $2) as used`, [brand, account])
      expect(counts).toEqual({ hits: 22, rollup: 22, daily: 22, used: 22 })
      // The usage each got back is the month's after its statement: the last ones shared theirs.
      expect(results[0]!.used).toBe(10)
      expect(results[4]!.used).toBe(22)
    })
  })
}
