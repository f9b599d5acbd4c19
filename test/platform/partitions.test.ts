import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { agentsConfigTest } from "../../src/agents/Config.js"
import { retentionPass } from "../../src/agents/Retention.js"
import { TimePartitions } from "../../src/platform/TimePartitions.js"
import { HITS, NOW, toRecord, tsOf, VISITS } from "../agents/fixtures.js"
import { fixedClock } from "../helpers/clock.js"
import { bearer, databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { postBatch, query, tenant, type Tenant } from "../ingestion/fixtures.js"

/**
 * Time partitions (docs/scale.md): crawler hits by week, AI referrals by month, partitions made ahead
 * by the service, and retention by dropping whole partitions while the rollups keep every figure.
 */
const DAY = 86_400_000
const HOUR = 3_600_000
const root = join(import.meta.dir, "..", "..")
/** The fixtures' records, each with an id of its own (a replay of a keyless record is a new delivery). */
const records = () => [...HITS, ...VISITS].map((hit, i) => ({ ...toRecord(hit), id: `rec-${i}` }))
const mondayOf = (ms: number) => {
  const day = ms - (ms % DAY)
  return new Date(day - ((new Date(day).getUTCDay() + 6) % 7) * DAY).toISOString().slice(0, 10).replaceAll("-", "")
}

describe("raw-hit retention issues no DELETE", () => {
  it("no source file nor migration function deletes rows of crawler_hits or ai_referrals", () => {
    const files: Array<string> = []
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (/\.(ts|sql)$/.test(entry.name)) files.push(path)
      }
    }
    walk(join(root, "src"))
    // The migrations before 0014 ran once, against the unpartitioned tables; the later ones must not delete either.
    for (const file of readdirSync(join(root, "migrations"))) if (Number(file.slice(0, 4)) >= 14) files.push(join(root, "migrations", file))
    expect(files.length).toBeGreaterThan(50)
    // The one delete allowed is not retention: what the foreign keys' on delete cascade did when a brand
    // is deleted in SQL (migration 0031's trigger function).
    const cascade = /create function brands_deleted_take_hits\(\)[\s\S]*?end \$\$;/
    const offenders = files.filter((file) =>
      /delete\s+from\s+(only\s+)?"?(crawler_hits|ai_referrals)\b/i.test(readFileSync(file, "utf8").replace(cascade, "")))
    expect(offenders).toEqual([])
  })
})

for (const backend of databaseBackends()) {
  describe(`time partitions on ${backend}`, () => {
    let app: TestApp
    let t: Tenant
    const partitions = <A>(f: (p: TimePartitions["Type"]) => Effect.Effect<A>) => app.run(Effect.flatMap(TimePartitions, f))
    const names = async (table: string) => (await partitions((p) => p.list(table))).map((p) => p.name)
    const count = async (table: string) =>
      (await query<{ n: number }>(app, `select count(*)::int as n from ${table} where brand_id = (select id from brands where slug = $1)`, [t.brandSlug]))[0]!.n
    const pages90 = async () => {
      const response = await app.fetch(`/api/public/v1/brands/${t.brandSlug}/agents/pages?range=90d&limit=500`, { headers: bearer(t.key) })
      return (await response.json()) as { pages: Array<{ path: string; hits: number }>; total: number }
    }

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      t = await tenant(app, "growth")
      // Partitions for every hit of the fixtures (the service made those from NOW's week on at start-up).
      await partitions((p) => p.ensure("crawler_hits", new Date(NOW.getTime() - 100 * DAY), NOW))
      await partitions((p) => p.ensure("ai_referrals", new Date(NOW.getTime() - 100 * DAY), NOW))
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: records() })
      expect(sent.status).toBe(200)
    }, 60_000)
    afterAll(() => app.dispose())

    it("both tables are range-partitioned on ts, by week and by month, with partitions ahead of the clock", async () => {
      const parents = await query<{ name: string; strategy: string }>(app, `
        select c.relname as name, p.partstrat as strategy from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
        join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() order by 1`)
      expect(parents).toEqual([{ name: "ai_referrals", strategy: "r" }, { name: "crawler_hits", strategy: "r" }])
      // Start-up made the current week (of the service's clock) and four weeks ahead.
      for (let w = 0; w <= 4; w++) expect(await names("crawler_hits")).toContain(`crawler_hits_p${mondayOf(Date.now() + w * 7 * DAY)}`)
      // On a clock at NOW: the current week (Monday 2026-05-18) and four ahead; the current month and two ahead.
      const made = await app.run(Effect.flatMap(TimePartitions, (p) => p.ensureAhead).pipe(Effect.withClock(fixedClock(NOW))))
      // The current week and month exist already (made for the fixtures): 4 weeks and 2 months are new, unless
      // another server process on this database (the two-process test mode) made them first at its start-up.
      expect([0, 4 + 2]).toContain(made)
      const hits = await names("crawler_hits")
      for (const week of ["20260518", "20260525", "20260601", "20260608", "20260615"]) expect(hits).toContain(`crawler_hits_p${week}`)
      for (const month of ["20260501", "20260601", "20260701"]) expect(await names("ai_referrals")).toContain(`ai_referrals_p${month}`)
      expect(hits.at(-1)).toBe("crawler_hits_default")
      const weeks = (await partitions((p) => p.list("crawler_hits"))).filter((p) => p.from !== null)
      for (const week of weeks) {
        expect(week.from!.getUTCDay()).toBe(1) // Monday
        expect(week.to!.getTime() - week.from!.getTime()).toBe(7 * DAY)
      }
      // Every fixture row found its range partition: the default holds none.
      expect((await query<{ n: number }>(app, `select count(*)::int as n from crawler_hits_default`))[0]!.n).toBe(0)
      expect((await query<{ n: number }>(app, `select count(*)::int as n from ai_referrals_default`))[0]!.n).toBe(0)
      // Made again: nothing more to make.
      expect(await app.run(Effect.flatMap(TimePartitions, (p) => p.ensureAhead).pipe(Effect.withClock(fixedClock(NOW))))).toBe(0)
    })

    it("a replayed record is stored once, whatever partition it went to", async () => {
      const again = await postBatch(app, t.key, { site_id: t.siteId, records: records() })
      expect(again.status).toBe(200)
      // The same id sent again without its timestamp (it gets the receive time, another week): still the same record.
      const { ts: _ts, ...withoutTs } = { ...toRecord(HITS[12]!), id: "rec-12" }
      const third = await postBatch(app, t.key, { site_id: t.siteId, records: [withoutTs] })
      expect(third.status).toBe(200)
      expect(await count("crawler_hits")).toBe(HITS.length)
      expect(await count("ai_referrals")).toBe(VISITS.length)
    })

    it("retention drops the weeks wholly past the horizon; the rollups and the reads keep every figure", async () => {
      const before = await pages90()
      const at = new Date(NOW.getTime() + HOUR)
      const result = await app.run(
        retentionPass.pipe(Effect.provide(agentsConfigTest()), Effect.withClock(fixedClock(at)))
      )
      // The weeks of the 95-, 60- and 40-day-old hits, and every empty week between them, up to the one
      // ending 2026-04-20 (the horizon is 2026-04-20 13:00).
      expect(result.hitPartitions).toBeGreaterThanOrEqual(3)
      const left = await partitions((p) => p.list("crawler_hits"))
      for (const p of left) if (p.to !== null) expect(p.to.getTime()).toBeGreaterThan(at.getTime() - 30 * DAY)
      expect(left.map((p) => p.name)).not.toContain("crawler_hits_p20260406") // the 40-day-old hit's week
      expect(left.map((p) => p.name)).toContain("crawler_hits_p20260427") // the 20-day-old hit's week
      expect(await count("crawler_hits")).toBe(HITS.filter((hit) => tsOf(hit) >= at.getTime() - 30 * DAY).length)
      expect(await count("crawler_hits")).toBe(HITS.length - 3)
      // Rollups stay: the 90-day pages list is unchanged, and the rollup still counts every hit.
      expect(await pages90()).toEqual(before)
      const rollup = await query<{ n: number }>(app, `select coalesce(sum(hits), 0)::int as n from crawler_rollup where brand_id = (select id from brands where slug = $1)`, [t.brandSlug])
      expect(rollup[0]!.n).toBe(HITS.length)
      // Referrals are kept 400 days: none of their partitions went.
      expect(result.referralPartitions).toBe(0)
      expect(await count("ai_referrals")).toBe(VISITS.length)
    }, 60_000)

    it("a month of referrals goes whole once it ends before the horizon; a row the default holds goes by rewriting it", async () => {
      // The 45-day-old visit (2026-04-05) is April's; the others are May's.
      expect(await partitions((p) => p.dropBefore("ai_referrals", new Date(Date.UTC(2026, 4, 1))))).toBeGreaterThanOrEqual(1)
      expect(await names("ai_referrals")).not.toContain("ai_referrals_p20260401")
      expect(await count("ai_referrals")).toBe(VISITS.length - 1)

      // A hit older than every partition lands in the default one, and goes when retention passes it.
      const old = Date.UTC(2025, 0, 8, 12)
      const sent = await postBatch(app, t.key, { site_id: t.siteId, records: [{ ...toRecord(HITS[0]!), ts: old, id: "old-one" }] })
      expect(sent.status).toBe(200)
      expect((await query<{ n: number }>(app, `select count(*)::int as n from crawler_hits_default`))[0]!.n).toBe(1)
      await partitions((p) => p.dropBefore("crawler_hits", new Date(Date.UTC(2025, 0, 9))))
      expect((await query<{ n: number }>(app, `select count(*)::int as n from crawler_hits_default`))[0]!.n).toBe(0)
      expect(await names("crawler_hits")).toContain("crawler_hits_default")

      // A partition made over rows the default holds takes them over.
      const sent2 = await postBatch(app, t.key, { site_id: t.siteId, records: [{ ...toRecord(HITS[0]!), ts: Date.UTC(2025, 1, 5, 12), id: "straggler" }] })
      expect(sent2.status).toBe(200)
      expect(await partitions((p) => p.ensure("crawler_hits", new Date(Date.UTC(2025, 1, 5)), new Date(Date.UTC(2025, 1, 5))))).toBe(1)
      expect((await query<{ n: number }>(app, `select count(*)::int as n from crawler_hits_default`))[0]!.n).toBe(0)
      expect((await query<{ n: number }>(app, `select count(*)::int as n from crawler_hits_p20250203`))[0]!.n).toBe(1)
    }, 60_000)
  })
}
