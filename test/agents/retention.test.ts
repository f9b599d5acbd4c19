import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { agentsConfigTest } from "../../src/agents/Config.js"
import { RetentionLive } from "../../src/agents/Retention.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { postBatch, query, tenant, type Tenant } from "../ingestion/fixtures.js"
import { HITS, NOW, toRecord, tsOf, VISITS } from "./fixtures.js"

/**
 * The retention fiber (docs/agents.md): raw hits past the horizon (30 days by default) are
 * deleted, rollup rows past 400 days; reads keep their figures because they read the rollups.
 * Driven by TestClock: each pass runs when the clock reaches the next interval.
 */
const DAY = 86_400_000
const HOUR = 3_600_000

for (const backend of databaseBackends()) {
  describe(`retention on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      t = await tenant(app, "growth")
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: [...HITS, ...VISITS].map(toRecord) })
      expect(sent.status).toBe(200)
    }, 60_000)
    afterAll(() => app.dispose())

    const count = async (table: string) =>
      (await query<{ n: number }>(app, `select count(*)::int as n from ${table} where brand_id = (select id from brands where slug = $1)`, [t.brandSlug]))[0]!.n
    const rollupHits = async () =>
      (await query<{ n: number }>(app, `select coalesce(sum(hits), 0)::int as n from crawler_rollup`))[0]!.n
    const pages90 = async () => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=90d&limit=500`, { headers: bearer(t.key) })
      return (await response.json()) as { pages: Array<{ path: string; hits: number }>; total: number }
    }
    const until = (cond: () => Promise<boolean>, tries = 200) =>
      Effect.promise(async () => {
        for (let i = 0; i < tries; i++) {
          if (await cond()) return true
          await Bun.sleep(25)
        }
        return false
      })

    it("deletes raw hits past 30 days and rollup rows past 400 days, on the clock's schedule; figures stay", async () => {
      const before = await pages90()
      expect(await count("crawler_hits")).toBe(HITS.length)
      const rawKeptAt = (at: number) => HITS.filter((hit) => tsOf(hit) >= at - 30 * DAY).length

      await app.run(
        Effect.scoped(
          Effect.gen(function*() {
            yield* TestClock.setTime(NOW.getTime())
            yield* Layer.build(RetentionLive.pipe(Layer.provide(agentsConfigTest({ sweepEveryMs: HOUR }))))
            // Nothing before the first interval.
            yield* TestClock.adjust(HOUR - 1)
            expect(yield* Effect.promise(() => count("crawler_hits"))).toBe(HITS.length)

            yield* TestClock.adjust(1)
            expect(yield* until(async () => (await count("crawler_hits")) === rawKeptAt(NOW.getTime() + HOUR))).toBe(true)
            expect(rawKeptAt(NOW.getTime() + HOUR)).toBe(HITS.length - 3) // 40, 60 and 95 days old
            expect(yield* Effect.promise(rollupHits)).toBeGreaterThanOrEqual(HITS.length)

            // Rollup rows of day today-400 go at the next pass; today-399 stays.
            yield* Effect.promise(() =>
              query(app, `insert into crawler_rollup (brand_id, day, path, bot, status, account_id, vendor, kind, hits, last_seen)
                select id, $2::date - 400, '/expired', 'GPTBot', 200, account_id, 'OpenAI', 'training_crawler', 1, now() from brands where slug = $1
                union all
                select id, $2::date - 399, '/kept', 'GPTBot', 200, account_id, 'OpenAI', 'training_crawler', 1, now() from brands where slug = $1`,
                [t.brandSlug, NOW.toISOString().slice(0, 10)])
            )
            let expired = false
            for (let i = 0; i < 5 && !expired; i++) {
              yield* TestClock.adjust(HOUR)
              expired = yield* until(async () => (await query(app, `select 1 from crawler_rollup where path = '/expired'`)).length === 0, 40)
            }
            expect(expired).toBe(true)
            expect((yield* Effect.promise(() => query(app, `select 1 from crawler_rollup where path = '/kept'`))).length).toBe(1)

            // Ten days later: hits that crossed the 30-day horizon meanwhile go too.
            // (A pass runs its SQL in real time while the test clock jumps: step an hour at a time until one
            // has run past the new time; the expected count is the same anywhere between +10 days and +17 days.)
            yield* TestClock.adjust(10 * DAY)
            const expected = rawKeptAt(NOW.getTime() + 2 * HOUR + 10 * DAY)
            expect(expected).toBe(HITS.length - 4) // the 20-day-old hit crossed the horizon
            let done = false
            for (let i = 0; i < 24 && !done; i++) {
              yield* TestClock.adjust(HOUR)
              done = yield* until(async () => (await count("crawler_hits")) === expected, 20)
            }
            expect(done).toBe(true)
          })
        ).pipe(Effect.provide(TestContext.TestContext))
      )
      // The reads never needed the raw hits.
      const after = await pages90()
      expect(after).toEqual(before)
      expect(await count("ai_referrals")).toBe(VISITS.length)
    }, 60_000)
  })
}
