import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { AgentsRepo, AgentsRepoLive, type SpanUpdate } from "../../src/agents/Repo.js"
import { SpanRollerLive } from "../../src/agents/SpanRoller.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { postBatch, query, tenant, type Tenant } from "../ingestion/fixtures.js"
import { HITS, NOW, toRecord } from "./fixtures.js"

/**
 * The span roller (docs/performance.md): at start and one second after each midnight UTC it moves
 * every read brand's spans to the new day in the background, so the first read of a day finds them
 * current and does no span work. Driven by TestClock.
 */
const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const TODAY = NOW.getTime() - (NOW.getTime() % DAY)

for (const backend of databaseBackends()) {
  describe(`span roller on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    let brandId: number
    let accountId: number
    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      t = await tenant(app, "growth")
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: HITS.map(toRecord) })
      expect(sent.status).toBe(200)
      const [brand] = await query<{ id: number; accountId: number }>(
        app,
        `select id::int as id, account_id::int as "accountId" from brands where slug = $1`,
        [t.brandSlug]
      )
      brandId = brand!.id
      accountId = brand!.accountId
      // A first read builds the brand's spans, ending today.
      const read = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=30d`, { headers: bearer(t.key) })
      expect(read.status).toBe(200)
    }, 60_000)
    afterAll(() => app.dispose())

    const asOf = async () =>
      (await query<{ day: string }>(app, `select to_char(as_of, 'YYYY-MM-DD') as day from crawler_span_state where brand_id = $1`, [brandId]))[0]?.day
    const ensure = (day: string) =>
      app.run(Effect.flatMap(AgentsRepo, (r) => r.ensureSpans(accountId, brandId, day)).pipe(Effect.provide(AgentsRepoLive)) as Effect.Effect<SpanUpdate>)
    const until = (day: string, tries = 400) =>
      Effect.promise(async () => {
        for (let i = 0; i < tries; i++) {
          if ((await asOf()) === day) return true
          await Bun.sleep(25)
        }
        return false
      })

    it("after a restart on a later day the spans move at start; after midnight UTC they move again; a read then does no span work", async () => {
      expect(await asOf()).toBe(isoDay(TODAY))
      await app.run(
        Effect.scoped(
          Effect.gen(function*() {
            // The process starts two days later, at 08:00 UTC: the roll at start brings the spans to that day.
            yield* TestClock.setTime(TODAY + 2 * DAY + 8 * 3_600_000)
            yield* Layer.build(SpanRollerLive)
            expect(yield* until(isoDay(TODAY + 2 * DAY))).toBe(true)

            // Nothing moves before midnight UTC (plus a second) ...
            yield* TestClock.adjust(16 * 3_600_000)
            yield* Effect.promise(() => Bun.sleep(100))
            expect(yield* Effect.promise(asOf)).toBe(isoDay(TODAY + 2 * DAY))
            // ... and just after it the spans end on the new day.
            yield* TestClock.adjust(1_000)
            expect(yield* until(isoDay(TODAY + 3 * DAY))).toBe(true)
          })
        ).pipe(Effect.provide(TestContext.TestContext))
      )
      // A reader of that day finds them current: no roll, no rebuild.
      expect(await ensure(isoDay(TODAY + 3 * DAY))).toBe("current")
    }, 60_000)
  })
}
