import { describe, expect, it } from "bun:test"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect, Layer, ManagedRuntime } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { HitsRepo, HitsRepoLive } from "../../src/ingestion/HitsRepo.js"
import { migrationsDir, runMigrations } from "../../src/platform/Migrations.js"
import { SqlMemory, sqlServer } from "../../src/platform/Sql.js"
import { databaseBackends, serverSchemaUrl } from "../helpers/app.js"

/**
 * Migration 0014 on a database holding the old layout: migrated up to 0013, filled through the old
 * schema (unpartitioned hits and referrals, keys without account_id), then migrated. Every row must
 * be there after, byte for byte, in the new partitions and under the new keys, and still usable.
 */
const upTo = (last: number): Migrator.Loader =>
  Effect.sync(() =>
    readdirSync(migrationsDir)
      .map((file) => /^(\d+)_(.+)\.sql$/.exec(file))
      .filter((match): match is RegExpExecArray => match !== null && Number(match[1]) <= last)
      .map((match): Migrator.ResolvedMigration => {
        const text = readFileSync(`${migrationsDir}/${match[0]}`, "utf8")
        return [Number(match[1]), match[2]!, Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text).raw))]
      })
      .sort((a, b) => a[0] - b[0])
  )

/** The old layout's data: two accounts, a brand each, hits over four months, and the rows under them. */
const OLD_DATA = `
insert into accounts (name, plan_id) values ('one', 'growth'), ('two', 'enterprise');
insert into brands (account_id, slug, name, domain, vertical, site_id)
select id, 'b' || id, 'Brand ' || id, 'b' || id || '.example', 'software', gen_random_uuid() from accounts;
insert into competitors (account_id, brand_id, name, domain) select account_id, id, 'Rival', 'rival.example' from brands;
insert into prompts (id, account_id, brand_id, prompt, topic, intent, source)
select gen_random_uuid(), account_id, id, 'best tool?', 'tools', 'commercial', 'manual' from brands;
insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, path, status, channel, verification)
select b.id, 'r:' || g, b.account_id, timestamptz '2026-02-03 10:00+00' + g * interval '37 hours', 'GPTBot', 'OpenAI',
       'training_crawler', '/p/' || (g % 7), 200, 'api', 'unverified'
from brands b cross join generate_series(1, 80) g;
insert into crawler_rollup (brand_id, day, path, bot, status, account_id, vendor, kind, hits, last_seen, verification)
select brand_id, (ts at time zone 'UTC')::date, path, bot, status, min(account_id), min(vendor), min(kind), count(*), max(ts), 'unverified'
from crawler_hits group by 1, 2, 3, 4, 5;
insert into crawler_daily (brand_id, day, bot, status, account_id, vendor, kind, hits, verification)
select brand_id, day, bot, status, min(account_id), min(vendor), min(kind), sum(hits), 'unverified' from crawler_rollup group by 1, 2, 3, 4;
insert into crawler_span_state (brand_id, as_of) select id, date '2026-06-01' from brands;
insert into crawler_span (brand_id, span, path, bot, account_id, vendor, kind, hits, oks, errors, last_seen)
select brand_id, 90, path, bot, min(account_id), 'OpenAI', 'training_crawler', sum(hits), sum(hits), 0, max(last_seen)
from crawler_rollup group by brand_id, path, bot;
insert into ai_referrals (brand_id, record_key, account_id, ts, engine, referrer, path, channel)
select b.id, 'v:' || g, b.account_id, timestamptz '2026-01-20 08:00+00' + g * interval '3 days', 'chatgpt', 'https://chatgpt.com/', '/', 'api'
from brands b cross join generate_series(1, 30) g;
insert into observations (account_id, brand_id, prompt_id, engine, region, language, observed_at, day, origin, response,
                          brand_mentioned, brand_rank, brand_cited, mentioned_competitors, citation_count)
select p.account_id, p.brand_id, p.id, 'chatgpt', 'US', 'en', timestamptz '2026-05-01 00:00+00' + g * interval '1 day',
       date '2026-05-01' + g, 'import', 'answer', true, 1, false, 1, 1
from prompts p cross join generate_series(0, 9) g;
insert into mentions (observation_id, account_id, brand_id, competitor_id, entity, prompt_id, engine, region, language,
                      observed_at, day, rank, sentiment, sentiment_label, snippet, via_citation_only)
select o.id, o.account_id, o.brand_id, c.id, 'Rival', o.prompt_id, o.engine, o.region, o.language, o.observed_at, o.day, 2, 0.5,
       'positive', 'Rival is fine', false
from observations o join competitors c on c.brand_id = o.brand_id;
insert into citations (observation_id, position, account_id, brand_id, engine, region, day, url, domain, bucket)
select id, 1, account_id, brand_id, engine, region, day, 'https://rival.example/', 'rival.example', 'competitor' from observations;
insert into fanouts (observation_id, position, account_id, brand_id, prompt_id, engine, day, sub_question)
select id, 1, account_id, brand_id, prompt_id, engine, day, 'which?' from observations;
insert into fanout_citations (fanout_id, position, account_id, brand_id, day, url, domain, bucket)
select id, 1, account_id, brand_id, day, 'https://x.example/', 'x.example', 'earned' from fanouts;
insert into brand_bots_seen (brand_id, bot, first_seen) select id, 'GPTBot', now() from brands;
insert into webhook_endpoints (id, account_id, url, events, secret, created_at)
select gen_random_uuid(), id, 'https://hooks.example/' || id, '{crawler.new_bot}', 'whsec_x', now() from accounts;
insert into webhook_events (id, account_id, type, dedup_key, body, created_at)
select 'msg_' || id, id, 'crawler.new_bot', 'k' || id, '{}', now() from accounts;
insert into webhook_deliveries (id, account_id, endpoint_id, event_id, status, created_at)
select gen_random_uuid(), e.account_id, e.id, 'msg_' || e.account_id, 'delivered', now() from webhook_endpoints e;
insert into webhook_attempts (delivery_id, attempt, at, response_status, duration_ms) select id, 1, now(), 200, 12 from webhook_deliveries;
`

/** crawler_span with its windows as columns (0030) as the rows of the old layout, one per window with hits. */
const SPANS_AS_ROWS = `(
  select s.brand_id, v.span::smallint as span, s.path, s.bot, s.account_id, s.vendor, s.kind, v.hits, v.oks, v.errors,
         v.last_seen, v.last_ok, v.last_error
  from crawler_span s cross join lateral (values ${[7, 30, 90].map((w) =>
    `(${w}, s.hits_${w}, s.oks_${w}, s.errors_${w}, s.last_seen_${w}, s.last_ok_${w}, s.last_error_${w})`).join(", ")})
    as v(span, hits, oks, errors, last_seen, last_ok, last_error)
  where v.hits > 0)`

/** Tables whose rows must come through unchanged (every column the old layout had). */
const CHECKED = [
  "brands", "competitors", "prompts", "crawler_hits", "crawler_rollup", "crawler_daily", "crawler_span", "ai_referrals",
  "observations", "mentions", "citations", "fanouts", "fanout_citations", "webhook_endpoints", "webhook_events",
  "webhook_deliveries"
]

for (const backend of databaseBackends()) {
  describe(`migration 0014 on ${backend}`, () => {
    it("moves a database of the old layout in place: every row kept, in its partition, under the new keys", async () => {
      const db = backend === "pglite" ? SqlMemory : sqlServer(await serverSchemaUrl(process.env.TEST_DATABASE_URL!))
      const runtime = ManagedRuntime.make(Layer.merge(db, HitsRepoLive.pipe(Layer.provide(db))))
      try {
        const sql = <A extends object>(text: string) =>
          runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (s) => s.unsafe<A>(text)).pipe(Effect.orDie))
        // Each table's rows as text, over the columns it had before the migration (ordered by all of them).
        // After every migration crawler_span holds a (path, bot)'s windows as columns (0030): read as the
        // old rows, one per window with hits.
        const fingerprint = async (migrated = false) => {
          const out: Record<string, { n: number; digest: string }> = {}
          for (const table of CHECKED) {
            const source = migrated && table === "crawler_span" ? SPANS_AS_ROWS : table
            const rows = await sql<{ n: number; digest: string | null }>(
              `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${source} t`
            )
            out[table] = { n: rows[0]!.n, digest: rows[0]!.digest ?? "" }
          }
          return out
        }

        const applied = await runtime.runPromise(
          Migrator.make({})({ loader: upTo(13), table: "schema_migrations" }).pipe(Effect.orDie)
        )
        expect(applied.at(-1)?.[0]).toBe(13)
        await sql(OLD_DATA)
        const before = await fingerprint()
        expect(before.crawler_hits!.n).toBe(160)
        expect(before.ai_referrals!.n).toBe(60)
        expect(before.mentions!.n).toBe(20)

        const now = await runtime.runPromise(runMigrations.pipe(Effect.orDie))
        expect(now.map(([id]) => id)).toContain(14)

        // Every row, byte for byte (the new account_id columns of other tables are checked below).
        expect(await fingerprint(true)).toEqual(before)
        // The hits sit in their weeks (none in the default partition), the referrals in their months.
        const placed = await sql<{ part: string; n: number }>(
          `select tableoid::regclass::text as part, count(*)::int as n from crawler_hits group by 1 order by 1`
        )
        expect(placed.length).toBeGreaterThan(10)
        expect(placed.every((p) => /crawler_hits_p\d{8}$/.test(p.part))).toBe(true)
        const months = await sql<{ part: string }>(`select distinct tableoid::regclass::text as part from ai_referrals order by 1`)
        expect(months.map((m) => m.part.replace(/^.*\./, ""))).toEqual(
          ["ai_referrals_p20260101", "ai_referrals_p20260201", "ai_referrals_p20260301", "ai_referrals_p20260401"]
        )
        // The tables that gained account_id have it from their parent.
        for (const [table, parent] of [["crawler_span_state", "brands b where b.id = t.brand_id"],
                                       ["brand_bots_seen", "brands b where b.id = t.brand_id"],
                                       ["webhook_attempts", "webhook_deliveries b where b.id = t.delivery_id"]] as const) {
          const wrong = await sql<{ n: number; total: number }>(
            `select count(*) filter (where t.account_id is distinct from (select b.account_id from ${parent}))::int as n,
                    count(*)::int as total from ${table} t`
          )
          expect(wrong[0]).toEqual({ n: 0, total: 2 })
        }

        // Queryable: a brand's hits over a window, through the new partitions.
        const window = await sql<{ n: number }>(`
          select count(*)::int as n from crawler_hits h join brands b on b.id = h.brand_id and b.account_id = h.account_id
          where b.slug = (select min(slug) from brands) and h.ts >= '2026-03-01T00:00:00Z' and h.ts < '2026-04-01T00:00:00Z'`)
        expect(window[0]!.n).toBe(20) // 31 days of one hit every 37 hours
        // A record migrated is not stored again; a new one is, and counted once in the rollup.
        const brand = (await sql<{ id: number; account: number }>(`select id::int as id, account_id::int as account from brands order by id limit 1`))[0]!
        const hit = (key: string, ts: number) => ({
          key, ts, bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler", host: "", path: "/p/1", query: "", method: "GET",
          status: 200, clientIp: null, country: null, referrer: "", ua: "GPTBot", recordId: null
        })
        const stored = await runtime.runPromise(Effect.flatMap(HitsRepo, (repo) =>
          repo.store({
            accountId: brand.account, brandId: brand.id, channel: "api", month: "2026-06-01", limit: 10, cap: null, referrals: [],
            hits: [hit("r:1", Date.UTC(2026, 5, 2)), hit("r:fresh", Date.UTC(2026, 5, 2))]
          })))
        expect(stored.stored).toBe(1)
        // The old layout's foreign keys hold under the new ones: deleting a brand takes what is under it.
        await sql(`delete from brands where id = ${brand.id}`)
        const left = await sql<{ hits: number; mentions: number; attempts: number }>(`
          select (select count(*) from crawler_hits where brand_id = ${brand.id})::int as hits,
                 (select count(*) from mentions where brand_id = ${brand.id})::int as mentions,
                 (select count(*) from webhook_attempts)::int as attempts`)
        expect(left[0]).toEqual({ hits: 0, mentions: 0, attempts: 2 })
      } finally {
        await runtime.dispose()
      }
    }, 60_000)
  })
}
