import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { agentsConfigTest } from "../../src/agents/Config.js"
import { AgentsRepo } from "../../src/agents/Repo.js"
import { HitsRepo, type HitRow } from "../../src/ingestion/HitsRepo.js"
import { VerificationRepo } from "../../src/verification/Repo.js"
import { retentionPass } from "../../src/agents/Retention.js"
import { Database } from "../../src/platform/Sql.js"
import { bearer, databaseBackends, fixedClock, makeTestApp, serverSchemaUrl, type TestApp } from "../helpers/app.js"
import { wrappedSql } from "../helpers/gatedSql.js"
import { twoServerMode } from "../helpers/servers.js"
import { folded, foldNow, postBatch, query, tenant, type Tenant } from "../ingestion/fixtures.js"
import { expectedPages, HITS, type Hit, matchingHits, NOW, type Params, query as search, toRecord, UA } from "./fixtures.js"

/**
 * The rollup aggregator (docs/performance.md): a delivery appends its hits to a queue that a background
 * fold moves into the rollups and spans. Nothing is lost or counted twice whoever folds, however many
 * processes fold at once, or when a fold dies before its commit; a read right after a delivery counts
 * it, folded or not; retention drops what it dropped before.
 */

/** The list variants: the per-path spans, the per-(path, bot) spans, the rollup (an exact code), paging. */
const VARIANTS: ReadonlyArray<Params & { limit?: number; offset?: number }> = [
  {},
  { status: "ok" },
  { status: "error" },
  { status: "404" },
  { sort: "uniques" },
  { sort: "errors" },
  { sort: "path" },
  { sort: "hits", dir: "asc" },
  { folder: "docs" },
  { q: "a" },
  { bot: "GPTBot" },
  { vendor: "OpenAI", status: "error" },
  { limit: 2 },
  { limit: 2, offset: 2 },
  { limit: 3, offset: 4, sort: "uniques" }
]

/** More hits of today on the fixtures' paths and a new one: they land in paths the spans already hold. */
const LATE: ReadonlyArray<Hit> = [
  { daysAgo: 0, minute: 300, ua: UA.perplexitybot, path: "/docs/a", status: 200 },
  { daysAgo: 0, minute: 301, ua: UA.gptbot, path: "/docs/a", status: 500 },
  { daysAgo: 0, minute: 302, ua: UA.oaiSearch, path: "/pricing", status: 404 },
  { daysAgo: 0, minute: 303, ua: UA.claudebot, path: "/brand-new", status: 200 },
  { daysAgo: 2, minute: 304, ua: UA.chatgptUser, path: "/blog/x", status: 200 },
  { daysAgo: 40, minute: 305, ua: UA.gptbot, path: "/far-late", status: 410 }
]

/** A SqlClient over another whose COMMIT, while `crash.on`, rolls the transaction back and fails. */
const diesAtCommit = (crash: { on: boolean }) =>
  wrappedSql((conn) => ({
    execute: (sql, params, transform) => conn.execute(sql, params, transform),
    executeRaw: (sql, params) => conn.executeRaw(sql, params),
    executeValues: (sql, params) => conn.executeValues(sql, params),
    executeStream: (sql, params, transform) => conn.executeStream(sql, params, transform),
    executeUnprepared: (sql, params, transform) =>
      crash.on && /^commit$/i.test(sql.trim())
        ? Effect.zipRight(
          Effect.orDie(conn.executeUnprepared("ROLLBACK", [], undefined)),
          Effect.fail(new SqlError({ message: "the process died before its commit" }))
        )
        : conn.executeUnprepared(sql, params, transform)
  }))

const send = async (app: TestApp, t: Tenant, hits: ReadonlyArray<Hit>) => {
  const sent = await postBatch(app, t.key, { site_id: t.siteId, records: hits.map(toRecord) })
  expect(sent.status).toBe(200)
  expect(((await sent.json()) as { accepted: number }).accepted).toBe(hits.length)
}

const queuedOf = async (app: TestApp, t: Tenant) =>
  (await query<{ n: number }>(app, `
    select count(*)::int as n from crawler_fold_queue q join brands b on b.id = q.brand_id and b.account_id = q.account_id
    where b.site_id = $1`, [t.siteId]))[0]!.n

/** Every list variant and GET /agents answer what the hits say. */
const expectReads = async (app: TestApp, t: Tenant, hits: ReadonlyArray<Hit>) => {
  for (const range of ["7d", "30d", "90d"] as const) {
    for (const { limit, offset, ...variant } of VARIANTS) {
      const params = { ...variant, range }
      const response = await app.fetch(
        `/api/public/v1/brands/${t.brandSlug}/agents/pages${search({ ...params, limit: limit ?? 500, offset })}`,
        { headers: bearer(t.key) }
      )
      expect(response.status).toBe(200)
      const body = (await response.json()) as { pages: unknown; total: number }
      const expected = expectedPages(params, hits)
      expect({ range, ...variant, limit, offset, pages: body.pages, total: body.total })
        .toEqual({ range, ...variant, limit, offset, pages: expected.slice(offset ?? 0, (offset ?? 0) + (limit ?? 500)), total: expected.length })
    }
    const dashboard = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents?range=${range}`, { headers: bearer(t.key) })
    expect(dashboard.status).toBe(200)
    const body = (await dashboard.json()) as { kpis: { hits: number; pages: number; bots: number } }
    expect(body.kpis.hits).toBe(matchingHits({ range }, hits).length)
    expect(body.kpis.pages).toBe(expectedPages({ range }, hits).length)
    // The bots of each page: their hits and errors add up to the page's, queued hits included.
    for (const page of expectedPages({ range }, hits)) {
      const bots = await app.fetch(
        `/api/public/v1/brands/${t.brandSlug}/agents/pages/bots${search({ range, path: page.path })}`,
        { headers: bearer(t.key) }
      )
      expect(bots.status).toBe(200)
      const pageBots = (await bots.json()) as { hits: number; errors: number; bots: Array<{ bot: string }> }
      expect({ path: page.path, hits: pageBots.hits, errors: pageBots.errors, bots: pageBots.bots.map((b) => b.bot).sort() })
        .toEqual({ path: page.path, hits: page.hits, errors: page.errors, bots: page.bots })
    }
  }
}

/** The rollup tables (folded) equal the raw hits of the brand, key by key; the queue is empty. */
const expectFoldedExactly = async (app: TestApp, t: Tenant) => {
  await folded(app)
  const [brand] = await query<{ id: number }>(app, `select id::int as id from brands where site_id = $1`, [t.siteId])
  const rollup = await query(app, `
    select to_char(day, 'YYYY-MM-DD') as day, path, bot, status, verification, hits, last_seen::text as ls from crawler_rollup
    where brand_id = $1 order by 1, 2, 3, 4, 5`, [brand!.id])
  const rollupRef = await query(app, `
    select to_char((ts at time zone 'UTC')::date, 'YYYY-MM-DD') as day, path, bot, status, verification, count(*)::int as hits,
           max(ts)::text as ls
    from crawler_hits where brand_id = $1 group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5`, [brand!.id])
  expect(rollup).toEqual(rollupRef)
  const daily = await query(app, `
    select to_char(day, 'YYYY-MM-DD') as day, bot, status, hits from crawler_daily where brand_id = $1 and hits > 0 order by 1, 2, 3`, [brand!.id])
  const dailyRef = await query(app, `
    select to_char((ts at time zone 'UTC')::date, 'YYYY-MM-DD') as day, bot, status, count(*)::int as hits
    from crawler_hits where brand_id = $1 group by 1, 2, 3 order by 1, 2, 3`, [brand!.id])
  expect(daily).toEqual(dailyRef)
  expect(await queuedOf(app, t)).toBe(0)
}

for (const backend of databaseBackends()) {
  describe(`rollup aggregator on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      // The schedule folds once at start, then not for a minute: the tests decide when hits are folded.
      app = await makeTestApp(backend, { now: NOW, agents: { foldEveryMs: 60_000 } })
    }, 60_000)
    afterAll(() => app.dispose())

    it("a read right after a delivery counts it, before the fold and after it, in every list and the KPIs", async () => {
      const t = await tenant(app, "growth")
      await send(app, t, HITS)
      await expectReads(app, t, HITS) // the spans are made here (they end today), the hits still queued
      await folded(app)
      await expectReads(app, t, HITS)
      // New hits on paths and bots the spans hold, and new ones: queued while the reads add them.
      await send(app, t, LATE)
      // Two server processes (and this one) fold on their own schedule: only in process is the queue known to wait.
      if (!twoServerMode()) expect(await queuedOf(app, t)).toBe(LATE.length)
      await expectReads(app, t, [...HITS, ...LATE])
      await expectFoldedExactly(app, t)
      await expectReads(app, t, [...HITS, ...LATE])
    })

    it("retention after a fold drops the same rollup rows as when deliveries wrote the rollups", async () => {
      const t = await tenant(app, "growth")
      // 500 days back: past the rollup's 400 days. Stored raw (its week's partition), queued, then folded and swept.
      const old: Hit = { daysAgo: 500, minute: 1, ua: UA.gptbot, path: "/ancient", status: 200 }
      await send(app, t, [old, ...HITS.slice(0, 5)])
      await app.run(retentionPass.pipe(Effect.provide(agentsConfigTest()), Effect.withClock(fixedClock(NOW))))
      const rows = await query<{ n: number }>(app, `
        select count(*)::int as n from crawler_rollup r join brands b on b.id = r.brand_id where b.site_id = $1 and r.path = '/ancient'`,
        [t.siteId])
      expect(rows[0]!.n).toBe(0)
      const kept = await query<{ n: number }>(app, `
        select coalesce(sum(r.hits), 0)::int as n from crawler_rollup_exact r join brands b on b.id = r.brand_id where b.site_id = $1`,
        [t.siteId])
      expect(kept[0]!.n).toBe(5)
    })
  })

  describe(`rollup aggregator and late verdicts on ${backend}`, () => {
    it("a late verdict moves a queued hit in the queue and a folded one in the rollups: each counted once, under its verdict", async () => {
      const app = await makeTestApp(backend, { now: NOW, agents: { foldEveryMs: 60_000 } })
      try {
        const t = await tenant(app, "growth")
        const [brand] = await query<{ id: number; accountId: number }>(app,
          `select id::int as id, account_id::int as "accountId" from brands where site_id = $1`, [t.siteId])
        const { id: brandId, accountId } = brand!
        const pending = (key: string, path: string): HitRow => ({
          key, recordId: key, ua: "GPTBot/1.2", ts: NOW.getTime() - 60_000, bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler", host: "", path, query: "",
          method: "GET", status: 200, clientIp: "203.0.113.9", country: null, referrer: "", verification: "unverified", verifyPending: true
        })
        const store = (hit: HitRow) =>
          app.run(Effect.flatMap(HitsRepo, (repo) =>
            repo.store({ accountId, brandId, channel: "api", month: "2026-05-01", hits: [hit], limit: 1, cap: null, referrals: [] })))
        const settle = (key: string) =>
          app.run(Effect.flatMap(VerificationRepo, (repo) => repo.settle([{ accountId, brandId, key, verdict: "spoofed" }])))
        const verdicts = (table: string) =>
          query<{ path: string; verification: string; hits: number }>(app, `
            select path, verification, sum(hits)::int as hits from ${table} where brand_id = $1 and hits > 0
            group by 1, 2 order by 1, 2`, [brandId])
        await store(pending("folded-first", "/folded"))
        await folded(app)
        await store(pending("still-queued", "/queued"))
        if (!twoServerMode()) expect(await queuedOf(app, t)).toBe(1)
        expect(await settle("folded-first")).toBe(1)
        expect(await settle("still-queued")).toBe(1)
        expect(await settle("still-queued")).toBe(0) // no longer waiting: moved once
        const expected = [{ path: "/folded", verification: "spoofed", hits: 1 }, { path: "/queued", verification: "spoofed", hits: 1 }]
        expect(await verdicts("crawler_rollup_exact")).toEqual(expected)
        await folded(app)
        expect(await verdicts("crawler_rollup")).toEqual(expected)
        expect((await query<{ n: number }>(app, `
          select coalesce(sum(hits), 0)::int as n from crawler_daily where brand_id = $1 and verification = 'spoofed'`, [brandId]))[0]!.n).toBe(2)
      } finally {
        await app.dispose()
      }
    }, 60_000)
  })

  describe(`rollup aggregator folding at once on ${backend}`, () => {
    it("several folders (two processes on a server, and each one's own fold) count every hit exactly once", async () => {
      // On a server: two apps (two processes each with TEST_SERVERS=2) on one schema, each folding every
      // 10 ms, and this process folding in a loop meanwhile. Embedded: one process, folds racing deliveries.
      const url = backend === "postgres" ? await serverSchemaUrl(process.env.TEST_DATABASE_URL!) : undefined
      const options = { now: NOW, agents: { foldEveryMs: 10 }, ...(url === undefined ? {} : { serverUrl: url }) }
      const first = await makeTestApp(backend, options)
      const second = url === undefined ? first : await makeTestApp(backend, options)
      try {
        const t = await tenant(first, "growth")
        const apps = [first, second]
        let sending = true
        const folders = apps.map(async (app) => {
          while (sending) {
            await foldNow(app)
            await Bun.sleep(2)
          }
        })
        const all: Array<Hit> = []
        const deliveries = Array.from({ length: 24 }, (_, i) => {
          const hits = HITS.map((hit, j) => ({ ...hit, minute: 300 + i * 15 + (j % 15), path: j % 3 === 0 ? `/race/${i % 4}` : hit.path }))
          all.push(...hits)
          return hits
        })
        await Promise.all(deliveries.map((hits, i) => send(apps[i % 2]!, t, hits)))
        sending = false
        await Promise.all(folders)
        await expectFoldedExactly(first, t)
        await expectReads(second, t, all)
      } finally {
        if (second !== first) await second.dispose()
        await first.dispose()
      }
    }, 120_000)

    it("the aggregator's upkeep (the queue's vacuum, the rollups' statistics) changes no figure", async () => {
      const app = await makeTestApp(backend, { now: NOW })
      try {
        const t = await tenant(app, "growth")
        await send(app, t, HITS)
        await folded(app)
        await send(app, t, LATE)
        await app.run(Effect.flatMap(AgentsRepo, (repo) => repo.upkeep))
        await expectReads(app, t, [...HITS, ...LATE])
        await folded(app)
        await app.run(Effect.flatMap(AgentsRepo, (repo) => repo.upkeep))
        await expectFoldedExactly(app, t)
        await expectReads(app, t, [...HITS, ...LATE])
      } finally {
        await app.dispose()
      }
    }, 60_000)

    it("a fold that dies before its commit leaves its hits queued: counted by reads meanwhile, folded once later", async () => {
      // While `crash` is set, a transaction's COMMIT rolls it back instead and fails: what the database
      // does with the open transaction of a process that died there.
      const crash = { on: false }
      const url = backend === "postgres" ? await serverSchemaUrl(process.env.TEST_DATABASE_URL!) : undefined
      const app = await makeTestApp(backend, {
        now: NOW,
        agents: { foldEveryMs: 60_000 },
        wrapSql: diesAtCommit(crash),
        ...(url === undefined ? {} : { serverUrl: url })
      })
      let disposed = false
      try {
        const t = await tenant(app, "growth")
        await send(app, t, HITS)
        crash.on = true
        const died = await foldNow(app).then(() => false, () => true)
        crash.on = false
        expect(died).toBe(true)
        expect(await queuedOf(app, t)).toBe(HITS.length)
        await expectReads(app, t, HITS)
        if (url !== undefined) {
          // A process started on the same database folds what the stopped one left, at its start.
          await app.dispose()
          disposed = true
          const restarted = await makeTestApp(backend, { now: NOW, agents: { foldEveryMs: 60_000 }, serverUrl: url })
          try {
            await expectFoldedExactly(restarted, t)
            await expectReads(restarted, t, HITS)
          } finally {
            await restarted.dispose()
          }
        } else {
          await expectFoldedExactly(app, t)
          await expectReads(app, t, HITS)
        }
      } finally {
        if (!disposed) await app.dispose()
      }
    }, 120_000)
  })
}

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("rollup aggregator after its connections are terminated (PostgreSQL server)", () => {
  it("the background pool's backends terminated for real: the schedule folds the next deliveries exactly once", async () => {
    const app = await makeTestApp("postgres", {
      now: NOW,
      agents: { foldEveryMs: 20 },
      inProcess: "it terminates its own process's backends and waits for that process's schedule"
    })
    try {
      const t = await tenant(app, "growth")
      /** Waits for this process's own schedule (no fold asked by the test) to empty the queue. */
      const foldedBySchedule = async () => {
        for (let attempt = 0; attempt < 250 && (await queuedOf(app, t)) > 0; attempt++) await Bun.sleep(20)
        expect(await queuedOf(app, t)).toBe(0)
      }
      await send(app, t, HITS)
      await foldedBySchedule()
      const instance = await app.run(Effect.map(Database, (db) => db.instanceId))
      // Every backend of this process: the requests' pool, the background pool (the schedule folds every
      // 20 ms, so it holds one) and the LISTEN one.
      const killed = await query<{ n: number }>(app, `
        select count(*)::int as n from (
          select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and application_name = $1 and pid <> pg_backend_pid()
        ) k`, [`ai-visibility/${instance}`])
      expect(killed[0]!.n).toBeGreaterThanOrEqual(2)
      // The statement above ran on a request connection: terminate that one too, from outside the pools.
      const { Client } = await import("pg")
      const outside = new Client({ connectionString: process.env.TEST_DATABASE_URL! })
      await outside.connect()
      try {
        const rest = await outside.query(
          `select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity
           where datname = current_database() and application_name = $1) k`,
          [`ai-visibility/${instance}`]
        )
        expect(rest.rows[0].n).toBeGreaterThanOrEqual(1)
      } finally {
        await outside.end()
      }
      // The pools drop a terminated client when its error arrives; a fold on one fails, is logged, and the
      // next tick takes a new connection.
      await Bun.sleep(200)
      await send(app, t, LATE)
      await foldedBySchedule()
      await expectFoldedExactly(app, t)
      await expectReads(app, t, [...HITS, ...LATE])
    } finally {
      await app.dispose()
    }
  }, 120_000)
})
