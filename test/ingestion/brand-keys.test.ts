import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { type HitRow, HitsRepo, type ReferralRow, type StoreInput } from "../../src/ingestion/HitsRepo.js"
import { monthStart } from "../../src/platform/Days.js"
import { databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { brandIds, query, tenant } from "./fixtures.js"

/**
 * crawler_hits and ai_referrals hold no foreign key to brands (migration 0031: the store ties a
 * statement's rows to their brand once, not once per row). What the keys did still holds: a brand
 * deleted in SQL takes its hits and referrals, a store for a brand that is gone stores nothing, and a
 * brand with hits cannot be given another key.
 */
for (const backend of databaseBackends()) {
  describe(`a brand's hits and referrals without a foreign key on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    const request = { method: "GET", host: "www.acme.com", query: "", referrer: "", status: 200, clientIp: null, country: null }
    const hit = (n: number): HitRow => ({
      ...request, recordId: `h${n}`, key: `r:h${n}`, ts: Date.now() - n * 1000, path: `/keys/${n}`, ua: "GPTBot",
      bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler"
    })
    const referral = (n: number): ReferralRow => ({
      ...request, recordId: `p${n}`, key: `r:p${n}`, ts: Date.now() - n * 1000, path: "/from-chatgpt", ua: "Mozilla/5.0",
      referrer: "https://chatgpt.com/", engine: "chatgpt"
    })
    const store = (account: number, brand: number, hits: ReadonlyArray<HitRow>, referrals: ReadonlyArray<ReferralRow>) => {
      const input: StoreInput = {
        accountId: account, brandId: brand, channel: "api", month: monthStart(new Date()), hits, limit: hits.length,
        cap: 1_000_000, referrals
      }
      return app.run(Effect.flatMap(HitsRepo, (repo) => repo.store(input)))
    }
    const counts = async (account: number, brand: number) =>
      (await query<{ hits: number; queued: number; referrals: number }>(app, `
        select (select count(*)::int from crawler_hits where account_id = $1 and brand_id = $2) as hits,
               (select count(*)::int from crawler_fold_queue where account_id = $1 and brand_id = $2) as queued,
               (select count(*)::int from ai_referrals where account_id = $1 and brand_id = $2) as referrals`, [account, brand]))[0]!

    it("deleting a brand in SQL takes its hits and referrals; a store for it afterwards stores nothing", async () => {
      const t = await tenant(app)
      const other = await tenant(app)
      const gone = await brandIds(app, t.siteId)
      const kept = await brandIds(app, other.siteId)
      expect((await store(gone.account, gone.brand, [hit(1), hit(2), hit(3)], [referral(1)])).stored).toBe(3)
      expect((await store(kept.account, kept.brand, [hit(1), hit(2)], [referral(1)])).stored).toBe(2)

      await query(app, `delete from brands where id = $1`, [gone.brand])
      expect(await counts(gone.account, gone.brand)).toEqual({ hits: 0, queued: 3, referrals: 0 })
      expect(await counts(kept.account, kept.brand)).toEqual({ hits: 2, queued: 2, referrals: 1 })

      // The brand's id, still known to a process that looked it up before: nothing lands under it.
      expect(await store(gone.account, gone.brand, [hit(4)], [referral(2)])).toEqual({ stored: 0, used: null })
      expect(await counts(gone.account, gone.brand)).toEqual({ hits: 0, queued: 3, referrals: 0 })
    })

    it("a brand whose hits or referrals are stored cannot be moved to another account", async () => {
      const t = await tenant(app)
      const to = await tenant(app)
      const { account, brand } = await brandIds(app, t.siteId)
      // A referral alone: no hit, so no rollup row whose own foreign key would refuse the move first.
      await store(account, brand, [], [referral(1)])
      const moved = await query(app, `update brands set account_id = $1 where id = $2`, [(await brandIds(app, to.siteId)).account, brand])
        .then(() => null, (error: unknown) => Bun.inspect(error))
      expect(moved).toContain("still has crawler hits or referrals")
      expect(await counts(account, brand)).toEqual({ hits: 0, queued: 0, referrals: 1 })
      // Its other columns change as ever.
      await query(app, `update brands set name = 'Renamed' where id = $1`, [brand])
    })
  })
}
