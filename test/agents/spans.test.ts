import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { AgentsRepo, AgentsRepoLive, type SpanUpdate, type SweepResult } from "../../src/agents/Repo.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { folded, postBatch, query, storedCounts, tenant, type Tenant } from "../ingestion/fixtures.js"
import { expectedPages, HITS, type Hit, NOW, type Params, query as search, toRecord, UA } from "./fixtures.js"

/**
 * The 7/30/90-day spans (crawler_span, per path and bot) and the per-path spans (crawler_page_span)
 * stay exactly the totals of their windows (docs/agents.md): when a new day rolls the windows
 * forward (days leaving subtracted, new days added), over several days or past a whole window,
 * when deliveries race a roll, and after a sweep. The reference is computed from the raw hits.
 */
const DAY = 86_400_000
const dayAt = (offset: number) => new Date(Date.UTC(2026, 4, 20) + offset * DAY).toISOString().slice(0, 10)
const TODAY = dayAt(0)

/** Hits on the days where the windows begin and end (6/7, 29/30, 89/90 days ago), every status kind. */
const EDGES: ReadonlyArray<Hit> = [
  { daysAgo: 6, minute: 100, ua: UA.gptbot, path: "/docs/a", status: 200 },
  { daysAgo: 7, minute: 101, ua: UA.gptbot, path: "/docs/a", status: 404 },
  { daysAgo: 7, minute: 102, ua: UA.claudebot, path: "/edge", status: 200 },
  { daysAgo: 29, minute: 103, ua: UA.perplexitybot, path: "/edge", status: 500 },
  { daysAgo: 30, minute: 104, ua: UA.perplexitybot, path: "/edge", status: 200 },
  { daysAgo: 30, minute: 105, ua: UA.oaiSearch, path: "/docs/a", status: null },
  { daysAgo: 89, minute: 106, ua: UA.chatgptUser, path: "/far", status: 200 },
  { daysAgo: 90, minute: 107, ua: UA.chatgptUser, path: "/far", status: 503 },
  { daysAgo: 90, minute: 108, ua: UA.gptbot, path: "/docs/a", status: 200 }
]

/** Every unfiltered and bot-filtered list variant the spans answer (plus one exact code, from the rollup). */
const VARIANTS: ReadonlyArray<Params> = [
  {},
  { status: "ok" },
  { status: "error" },
  { status: "404" },
  { sort: "uniques" },
  { folder: "docs" },
  { bot: "GPTBot" },
  { vendor: "OpenAI", status: "error" }
]

for (const backend of databaseBackends()) {
  describe(`crawler spans on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
    }, 60_000)
    afterAll(() => app.dispose())

    const repo = <A>(f: (repo: typeof AgentsRepo.Service) => Effect.Effect<A>) =>
      app.run(Effect.flatMap(AgentsRepo, f).pipe(Effect.provide(AgentsRepoLive)) as Effect.Effect<A>)
    /** Each brand's account, noted by brandOf. */
    const accountOf = new Map<number, number>()
    const ensure = (brandId: number, day: string) => repo<SpanUpdate>((r) => r.ensureSpans(accountOf.get(brandId)!, brandId, day))
    const brandOf = async (t: Tenant) => {
      const [brand] = await query<{ id: number; accountId: number }>(
        app,
        `select id::int as id, account_id::int as "accountId" from brands where slug = $1`,
        [t.brandSlug]
      )
      accountOf.set(brand!.id, brand!.accountId)
      return brand!.id
    }
    const send = async (t: Tenant, hits: ReadonlyArray<Hit>) => {
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: hits.map(toRecord) })
      expect(sent.status).toBe(200)
      expect(((await sent.json()) as { accepted: number }).accepted).toBe(hits.length)
    }

    /** Both span tables equal the totals of the windows ending `day`, computed from the raw hits, once folded. */
    const expectExact = async (brandId: number, day: string) => {
      await folded(app)
      const state = await query<{ day: string }>(app, `select to_char(as_of, 'YYYY-MM-DD') as day from crawler_span_state where brand_id = $1`, [brandId])
      expect(state[0]?.day).toBe(day)
      const window = `from crawler_hits h cross join (values (7), (30), (90)) as w(span)
        where h.brand_id = $1 and (h.ts at time zone 'UTC')::date between $2::date - (w.span - 1) and $2::date`
      const ok = "h.status between 200 and 399"
      const err = "h.status >= 400"
      // One row per (path, bot), a window's figures in its columns (0 and null outside it): a row per window with hits.
      const spans = await query(app, "select * from (" + [7, 30, 90].map((w) => `
        select ${w} as span, path, bot, hits_${w} as hits, oks_${w} as oks, errors_${w} as errors, last_seen_${w}::text as ls,
               last_ok_${w}::text as lo, last_error_${w}::text as le
        from crawler_span where brand_id = $1 and hits_${w} > 0`).join(" union all ") + `) s order by span, path collate "C", bot collate "C"`, [brandId])
      const spansOutside = await query(app, `
        select count(*)::int as n from crawler_span
        where brand_id = $1 and (${[7, 30, 90].map((w) => `(hits_${w} = 0 and ((oks_${w}, errors_${w}) <> (0, 0)
          or coalesce(last_seen_${w}, last_ok_${w}, last_error_${w}) is not null))`).join(" or ")} or hits_90 = 0)`, [brandId])
      expect(spansOutside).toEqual([{ n: 0 }])
      const spansRef = await query(app, `
        select w.span, h.path, h.bot, count(*)::int as hits, (count(*) filter (where ${ok}))::int as oks,
               (count(*) filter (where ${err}))::int as errors, max(h.ts)::text as ls, (max(h.ts) filter (where ${ok}))::text as lo,
               (max(h.ts) filter (where ${err}))::text as le
        ${window} group by 1, 2, 3 order by span, path collate "C", bot collate "C"`, [brandId, day])
      expect(spans).toEqual(spansRef)
      // One row per path, a window's figures in its columns (0 and null outside it): a row per window with hits.
      const pages = await query(app, "select * from (" + [7, 30, 90].map((w) => `
        select ${w} as span, path, hits_${w} as hits, oks_${w} as oks, errors_${w} as errors, uniques_${w} as uniques,
               ok_uniques_${w} as oku, error_uniques_${w} as erru, last_seen_${w}::text as ls, last_ok_${w}::text as lo,
               last_error_${w}::text as le
        from crawler_page_span where brand_id = $1 and hits_${w} > 0`).join(" union all ") + `) p order by span, path collate "C"`, [brandId])
      const outside = await query(app, `
        select count(*)::int as n from crawler_page_span
        where brand_id = $1 and (${[7, 30, 90].map((w) => `(hits_${w} = 0 and (oks_${w}, errors_${w}, uniques_${w}, ok_uniques_${w},
          error_uniques_${w}) <> (0, 0, 0, 0, 0) or hits_${w} = 0 and coalesce(last_seen_${w}, last_ok_${w}, last_error_${w}) is not null)`).join(" or ")}
          or hits_90 = 0)`, [brandId])
      expect(outside).toEqual([{ n: 0 }])
      const pagesRef = await query(app, `
        select w.span, h.path, count(*)::int as hits, (count(*) filter (where ${ok}))::int as oks,
               (count(*) filter (where ${err}))::int as errors, count(distinct h.bot)::int as uniques,
               (count(distinct h.bot) filter (where ${ok}))::int as oku, (count(distinct h.bot) filter (where ${err}))::int as erru,
               max(h.ts)::text as ls, (max(h.ts) filter (where ${ok}))::text as lo, (max(h.ts) filter (where ${err}))::text as le
        ${window} group by 1, 2 order by span, path collate "C"`, [brandId, day])
      expect(pages).toEqual(pagesRef)
      // The windows' path counts, kept beside them, are their row counts.
      const counts = await query(app, `select pages_7, pages_30, pages_90 from crawler_span_state where brand_id = $1`, [brandId])
      const rowsOf = (span: number) => pagesRef.filter((row) => row.span === span).length
      expect(counts).toEqual([{ pages_7: rowsOf(7), pages_30: rowsOf(30), pages_90: rowsOf(90) }])
    }

    /** The HTTP lists (today = the fixtures' day) equal the reference answers over `hits`. */
    const expectLists = async (t: Tenant, hits: ReadonlyArray<Hit>) => {
      for (const range of ["7d", "30d", "90d"] as const) {
        for (const variant of VARIANTS) {
          const params = { ...variant, range, limit: 500 }
          const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages${search(params)}`, { headers: bearer(t.key) })
          expect(response.status).toBe(200)
          const body = (await response.json()) as { pages: unknown; total: number }
          const expected = expectedPages(params, hits)
          expect(body.pages).toEqual(expected)
          expect(body.total).toBe(expected.length)
        }
      }
    }

    it("a new day rolls the windows forward exactly: the day leaving each window subtracted, the new day added", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      await send(t, [...HITS, ...EDGES])
      expect(await ensure(b, dayAt(-1))).toBe("rebuilt") // no spans yet
      await expectExact(b, dayAt(-1))
      expect(await ensure(b, TODAY)).toBe("rolled")
      await expectExact(b, TODAY)
      expect(await ensure(b, TODAY)).toBe("current")
      await expectLists(t, [...HITS, ...EDGES])
    })

    it("hits delivered while the spans end yesterday wait for the roll; hits delivered after it count at once, new bots too", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      await send(t, HITS)
      expect(await ensure(b, dayAt(-1))).toBe("rebuilt")
      await send(t, EDGES.map((hit) => ({ ...hit, minute: hit.minute + 100 })))
      // Today's hits are not in windows ending yesterday; the others were added by the ingestion statement.
      await send(t, [{ daysAgo: 0, minute: 300, ua: UA.perplexitybot, path: "/docs/a", status: 200 }])
      await expectExact(b, dayAt(-1))
      expect(await ensure(b, TODAY)).toBe("rolled")
      await expectExact(b, TODAY)
      // After the roll: a bot new to a page (uniques), a bot's first error on a page that had only its oks
      // (error uniques), its first ok on a page with only errors (ok uniques), a brand-new page.
      const after: ReadonlyArray<Hit> = [
        { daysAgo: 0, minute: 400, ua: UA.chatgptUser, path: "/docs/a", status: 200 },
        { daysAgo: 2, minute: 401, ua: UA.gptbot, path: "/robots.txt", status: 500 },
        { daysAgo: 1, minute: 402, ua: UA.oaiSearch, path: "/docs/b", status: 200 },
        { daysAgo: 40, minute: 403, ua: UA.claudebot, path: "/brand-new", status: 404 },
        { daysAgo: 95, minute: 404, ua: UA.claudebot, path: "/too-old", status: 200 }
      ]
      await send(t, after)
      await expectExact(b, TODAY)
      await expectLists(t, [
        ...HITS,
        ...EDGES.map((hit) => ({ ...hit, minute: hit.minute + 100 })),
        { daysAgo: 0, minute: 300, ua: UA.perplexitybot, path: "/docs/a", status: 200 },
        ...after
      ])
    })

    it("several days at once, a gap longer than a window, a day before the spans' own: each window exact", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      await send(t, [...HITS, ...EDGES])
      expect(await ensure(b, dayAt(-10))).toBe("rebuilt")
      await expectExact(b, dayAt(-10))
      expect(await ensure(b, TODAY)).toBe("rolled") // the 7-day window rebuilt, 30 and 90 rolled ten days
      await expectExact(b, TODAY)
      expect(await ensure(b, dayAt(40))).toBe("rolled") // 7 and 30 rebuilt, 90 rolled forty days
      await expectExact(b, dayAt(40))
      expect(await ensure(b, dayAt(200))).toBe("rebuilt")
      await expectExact(b, dayAt(200))
      expect(await ensure(b, TODAY)).toBe("rebuilt") // back in time
      await expectExact(b, TODAY)
      await expectLists(t, [...HITS, ...EDGES])
    })

    it("deliveries racing a roll are counted exactly once, whichever locks the state row first", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      await send(t, HITS)
      const all: Array<Hit> = [...HITS]
      for (let round = 0; round < 3; round++) {
        expect(await ensure(b, dayAt(-1))).toBe("rebuilt") // back to windows ending yesterday
        const batches = Array.from({ length: 6 }, (_, i) =>
          [...EDGES, { daysAgo: 0, minute: 0, ua: UA.gptbot, path: "/race", status: 200 }, { daysAgo: 1, minute: 0, ua: UA.claudebot, path: "/race", status: 404 }]
            .map((hit, j) => ({ ...hit, minute: 100 + round * 200 + i * 25 + j }))
        )
        const [update] = await Promise.all([ensure(b, TODAY), ...batches.map((batch) => send(t, batch))])
        expect(update).toBe("rolled")
        all.push(...batches.flat())
        await expectExact(b, TODAY)
      }
      await expectLists(t, all)
    })

    it("concurrent deliveries of one brand, sharing statements and records: each hit once, rollups, spans and usage exact", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      expect(await ensure(b, TODAY)).toBe("rebuilt")
      const records = Array.from({ length: 90 }, (_, i) => ({
        id: `shared-${i}`,
        hit: { daysAgo: i % 3, minute: 500 + i, ua: i % 2 === 0 ? UA.gptbot : UA.claudebot, path: `/shared/${i % 4}`, status: i % 5 === 0 ? 404 : 200 }
      }))
      // Delivery i holds records 10i to 10i + 19: all but the first and last ten come in two deliveries.
      const responses = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        postBatch(app, t.key, { site_id: t.siteId, records: records.slice(10 * i, 10 * i + 20).map((r) => ({ ...toRecord(r.hit), id: r.id })) })))
      let accepted = 0
      for (const response of responses) {
        expect(response.status).toBe(200)
        accepted += ((await response.json()) as { accepted: number }).accepted
      }
      expect(accepted).toBe(90)
      expect(await storedCounts(app, b)).toEqual({ hits: 90, rollup: 90, daily: 90, used: 90 })
      await expectExact(b, TODAY)
      await expectLists(t, records.map((r) => r.hit))
      // Sent again, all at once: nothing is stored twice.
      const again = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        postBatch(app, t.key, { site_id: t.siteId, records: records.slice(10 * i, 10 * i + 20).map((r) => ({ ...toRecord(r.hit), id: r.id })) })))
      for (const response of again) expect(((await response.json()) as { accepted: number }).accepted).toBe(0)
      await expectExact(b, TODAY)
    })

    it("a rebuild that more than doubles the span tables takes their statistics, so plans made before see them as they are", async () => {
      const t = await tenant(app, "growth")
      const brandId = await brandOf(t)
      // 4,000 paths crawled today: 4,000 page span rows (12,000 span rows), far more than every other test's.
      await query(app, `
        insert into crawler_rollup (brand_id, day, path, bot, status, verification, account_id, vendor, kind, hits, last_seen)
        select $1, $2::date, '/many/' || g, 'GPTBot', 200, 'verified', $3, 'OpenAI', 'training', 1, $2::date + interval '1 hour'
        from generate_series(1, 4000) g`, [brandId, TODAY, accountOf.get(brandId)])
      expect(await ensure(brandId, TODAY)).toBe("rebuilt")
      const [stats] = await query<{ pages: number; stated: number; rows: number }>(app, `
        select pg_relation_size(c.oid)::float8 / 8192 as pages, c.relpages::float8 as stated, c.reltuples::float8 as rows
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relname = 'crawler_page_span' and n.nspname = current_schema()`)
      expect(stats!.stated).toBeGreaterThanOrEqual(stats!.pages / 2)
      expect(stats!.rows).toBeGreaterThanOrEqual(4_000)
    })

    it("a sweep keeps the rollup days the 90-day window still holds, so the next roll subtracts them", async () => {
      const t = await tenant(app, "growth")
      const b = await brandOf(t)
      await send(t, [...HITS, ...EDGES])
      expect(await ensure(b, dayAt(-1))).toBe("rebuilt")
      // Rollup rows of every day before today would go (raw hits stay: the reference reads them). The
      // retention pass folds the queued hits before it sweeps (Retention.ts): so does this.
      await folded(app)
      const swept = await repo<SweepResult>((r) => r.sweep(new Date(Date.UTC(2000, 0, 1)), TODAY))
      expect(swept.rollup).toBeGreaterThan(0) // the 95-day-old hit's row, before the window's first day
      const days = await query<{ day: string }>(app, `
        select distinct to_char(day, 'YYYY-MM-DD') as day from crawler_rollup where brand_id = $1 order by 1`, [b])
      expect(days[0]!.day).toBe(dayAt(-90)) // the first day of the 90 days ending yesterday
      expect(await ensure(b, TODAY)).toBe("rolled")
      await expectExact(b, TODAY)
    })
  })
}
