/**
 * Growth (docs/scale.md): do ingestion, the agent reads and retention stay as fast while the tables
 * grow? 1,000 accounts (a brand each) with 400 days of crawler rollups, then crawler hits inside the
 * raw-hit retention window at each size of STEPS; at each size, one server process on PostgreSQL:
 *   - drain ingest rate: DELIVERIES deliveries of RECORDS crawler hits to one account, CONCURRENCY at a time;
 *   - GET /agents and /agents/pages (90 days) of that account: median and p95 of RUNS calls, alternating;
 *   - the retention sweep: a week of expired hits (a tenth of the size) dropped as a partition, next to
 *     the row-by-row DELETE it replaced on the same rows (up to DELETE_MAX hits, it is slow);
 *   - bytes per stored hit (partitions and their indexes).
 * Everything is seeded with set-based SQL (generate_series), not through HTTP; the seeded hits are raw
 * rows only (the reads use the seeded rollups), foreign-key triggers off while seeding (rows valid by
 * construction).
 *
 *   nice bun run bench/growth.ts                         1M, 5M and 20M hits
 *   STEPS=1000000,20000000 nice bun run bench/growth.ts  1M and 20M only (seeding 20M takes 1.5 to 5 minutes)
 *
 * The last lines compare each size with the first: ingest hits/s and read p50 (the goal: flat from 1M
 * to 20M). GROWTH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): a schema of its own is
 * made there and dropped after (KEEP=1 keeps it). STEPS (default 1000000,5000000,20000000),
 * ACCOUNTS (1000), ROLLUP_DAYS (400), ROLLUP_PATHS (4: rollup rows per brand and day = paths x 3 bots), RUNS (15), DELIVERIES (40), RECORDS (500), CONCURRENCY (4),
 * DELETE_MAX (5000000), PORT (40522).
 */
import postgres from "postgres"
import { drainBody, loadAverage, percentile, seedAccount, startServer } from "./support.js"

const baseUrl = process.env.GROWTH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const STEPS = (process.env.STEPS ?? "1000000,5000000,20000000").split(",").map(Number)
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 1000)
const ROLLUP_DAYS = Number(process.env.ROLLUP_DAYS ?? 400)
const ROLLUP_PATHS = Number(process.env.ROLLUP_PATHS ?? 4)
const RUNS = Number(process.env.RUNS ?? 15)
const DELIVERIES = Number(process.env.DELIVERIES ?? 40)
const RECORDS = Number(process.env.RECORDS ?? 500)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4)
const DELETE_MAX = Number(process.env.DELETE_MAX ?? 5_000_000)
const PORT = Number(process.env.PORT ?? 40522)

const schema = `growth_${Date.now().toString(36)}`
const admin = postgres(baseUrl, { max: 1, onnotice: () => {} })
await admin.unsafe(`create schema ${schema}`)
const url = new URL(baseUrl)
url.searchParams.set("options", `-c search_path=${schema}`)
const databaseUrl = url.toString()
const db = postgres(baseUrl, { max: 1, onnotice: () => {}, connection: { search_path: schema } })

const t0 = performance.now()
const log = (what: string) => console.error(`[${((performance.now() - t0) / 1000).toFixed(0)} s] ${what}`)
const timed = async <A>(f: () => Promise<A>) => {
  const start = performance.now()
  const value = await f()
  return { ms: performance.now() - start, value }
}

const server = await startServer({ DATABASE_URL: databaseUrl, RETENTION_SWEEP_MINUTES: "100000" }, PORT)
try {
  const { key, sites } = await seedAccount(server.base, databaseUrl, ["measured"])
  const site = sites[0]!
  const auth = { authorization: `Bearer ${key}` }

  log(`seeding ${ACCOUNTS - 1} more accounts and ${ROLLUP_DAYS} days of rollups`)
  await db.unsafe(`
    insert into accounts (name, plan_id) select 'acct-' || g, 'enterprise' from generate_series(2, ${ACCOUNTS}) g;
    insert into brands (account_id, slug, name, domain, vertical, site_id)
    select id, 'b', 'B', 'b.example', 'saas', gen_random_uuid() from accounts where name like 'acct-%';
    create table bench_brands as select (row_number() over (order by id) - 1)::int as n, id, account_id from brands;
    set session_replication_role = replica;
    insert into crawler_rollup (brand_id, day, path, bot, status, verification, account_id, vendor, kind, hits, last_seen)
    select b.id, current_date - d, '/p/' || p, (array['GPTBot','ClaudeBot','PerplexityBot'])[k], 200, 'unverified', b.account_id,
           (array['OpenAI','Anthropic','Perplexity'])[k], (array['training_crawler','training_crawler','search_crawler'])[k],
           1 + (d + p + k) % 7, (current_date - d)::timestamp at time zone 'UTC' + interval '12 hours'
    from bench_brands b, generate_series(0, ${ROLLUP_DAYS - 1}) d, generate_series(1, ${ROLLUP_PATHS}) p, generate_series(1, 3) k;
    insert into crawler_daily (brand_id, day, bot, status, verification, account_id, vendor, kind, hits)
    select brand_id, day, bot, status, verification, min(account_id), min(vendor), min(kind), sum(hits)::int
    from crawler_rollup group by brand_id, day, bot, status, verification;
    set session_replication_role = origin;
    select time_partitions_ensure('crawler_hits', now() - interval '30 days', now());`)
  // Vacuumed as a table grown over months would be (see the hits below).
  await db.unsafe(`vacuum (analyze) crawler_rollup, crawler_daily, accounts, brands`)
  const rollupRows = (await db<Array<{ n: number }>>`select count(*)::int as n from crawler_rollup`)[0]!.n
  log(`${rollupRows} rollup rows`)

  const reads = [
    `/api/public/v1/brands/measured/agents?range=90d`,
    `/api/public/v1/brands/measured/agents/pages?range=90d&limit=50`
  ]
  // The first read builds the brand's 7/30/90-day spans (once per brand and day): not what is measured.
  for (const path of reads) if (!(await fetch(server.base + path, { headers: auth })).ok) throw new Error(`${path} failed`)

  // Deliveries hit a fixed set of pages: the measured account's own pages stay the same from one size
  // to the next, so the reads measure the tables' growth, not the account's (a path per record would
  // add 20,000 pages to it at every size).
  const pagePath = (i: number) => `/p/${i % 400}`

  let seeded = 0
  let round = 0
  const rows: Array<Record<string, string | number>> = []
  for (const target of STEPS) {
    round++
    log(`seeding hits up to ${target}`)
    const seed = await timed(() =>
      db.unsafe(`
        set session_replication_role = replica;
        insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, method, status, channel)
        select b.id, 's' || g, b.account_id, now() - ((g::bigint * 7919) % 2505600) * interval '1 second',
               (array['GPTBot','ClaudeBot','PerplexityBot'])[1 + g % 3], (array['OpenAI','Anthropic','Perplexity'])[1 + g % 3],
               (array['training_crawler','training_crawler','search_crawler'])[1 + g % 3], 'www.example.com',
               '/p/' || (g % 4000), 'GET', (array[200, 200, 200, 304, 404])[1 + g % 5], 'drain'
        from generate_series(${seeded + 1}, ${target}) g join bench_brands b on b.n = g % ${ACCOUNTS};
        set session_replication_role = origin;`)
    )
    // A production table has been vacuumed as it grew; millions of rows inserted at once have not, and
    // autovacuum catching up on them would run beside the measurement (two cores): done here, untimed.
    await db.unsafe(`vacuum (analyze) crawler_hits`)
    seeded = target
    log(`seeded in ${(seed.ms / 1000).toFixed(0)} s`)

    // Drain ingest into the measured account (new records each round), after two untimed deliveries.
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, { method: "POST", headers: auth, body: drainBody(`w${round}d${i}`, RECORDS, 0, Date.now(), pagePath) })
      if (!r.ok) throw new Error(`warm-up delivery ${r.status}`)
      await r.arrayBuffer()
    }
    const deliveries = Array.from({ length: DELIVERIES }, (_, i) => drainBody(`g${round}d${i}`, RECORDS, 0, Date.now(), pagePath))
    let next = 0
    let failed = 0
    const ingest = await timed(() =>
      Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < deliveries.length) {
          const body = deliveries[next++]!
          const r = await fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, { method: "POST", headers: auth, body })
          if (!r.ok) failed++
          await r.arrayBuffer()
        }
      }))
    )
    if (failed > 0) throw new Error(`${failed} deliveries failed`)
    const ingestRate = (DELIVERIES * RECORDS) / (ingest.ms / 1000)

    // Reads, alternating.
    const lat: Array<Array<number>> = reads.map(() => [])
    for (let i = 0; i < RUNS; i++) {
      for (let r = 0; r < reads.length; r++) {
        const { ms, value } = await timed(() => fetch(server.base + reads[r]!, { headers: auth }))
        if (!value.ok) throw new Error(`${reads[r]} ${value.status}`)
        await value.arrayBuffer()
        lat[r]!.push(ms)
      }
    }
    const stats = lat.map((l) => l.sort((a, b) => a - b)).map((l) => ({ p50: percentile(l, 0.5), p95: percentile(l, 0.95) }))

    // Retention: an expired week holding a tenth of the size, dropped whole; then the DELETE it replaced.
    const expired = Math.round(target / 10)
    const seedExpired = (prefix: string) =>
      db.unsafe(`
        select time_partitions_ensure('crawler_hits', date_trunc('week', now() - interval '60 days'), date_trunc('week', now() - interval '60 days'));
        set session_replication_role = replica;
        insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, path, status, channel)
        select b.id, '${prefix}' || g, b.account_id, date_trunc('week', now() - interval '60 days') + ((g::bigint * 7919) % 600000) * interval '1 second',
               'GPTBot', 'OpenAI', 'training_crawler', '/old/' || (g % 4000), 200, 'drain'
        from generate_series(1, ${expired}) g join bench_brands b on b.n = g % ${ACCOUNTS};
        set session_replication_role = origin;`)
    await seedExpired(`x${round}-`)
    const drop = await timed(() => db.unsafe(`select time_partitions_drop_before('crawler_hits', now() - interval '30 days')`))
    let deleteMs: number | null = null
    if (expired <= DELETE_MAX) {
      await seedExpired(`y${round}-`)
      // The old retention: per brand, a DELETE over the (brand_id, ts) index.
      const del = await timed(async () => {
        for (const { id } of await db<Array<{ id: number }>>`select id from bench_brands order by id`) {
          await db`delete from crawler_hits where brand_id = ${id} and ts < now() - interval '30 days'`
        }
      })
      deleteMs = del.ms
      await db.unsafe(`select time_partitions_drop_before('crawler_hits', now() - interval '30 days')`)
    }

    const size = (await db<Array<{ bytes: number; hits: number }>>`
      select sum(pg_total_relation_size(inhrelid))::float8 as bytes, (select count(*) from crawler_hits)::float8 as hits
      from pg_inherits where inhparent = 'crawler_hits'::regclass`)[0]!
    const row = {
      hits: target,
      "seed s": Math.round(seed.ms / 1000),
      "ingest hits/s": Math.round(ingestRate),
      "/agents p50 ms": stats[0]!.p50.toFixed(1),
      "/agents p95 ms": stats[0]!.p95.toFixed(1),
      "/pages p50 ms": stats[1]!.p50.toFixed(1),
      "/pages p95 ms": stats[1]!.p95.toFixed(1),
      "expired hits": expired,
      "drop ms": drop.ms.toFixed(0),
      "DELETE ms": deleteMs === null ? "-" : deleteMs.toFixed(0),
      "bytes/hit": Math.round(size.bytes / size.hits),
      load: await loadAverage()
    }
    rows.push(row)
    console.table([row])
  }
  console.log(`\n${ACCOUNTS} accounts, ${rollupRows} rollup rows (${ROLLUP_DAYS} days); ingest ${DELIVERIES} x ${RECORDS} records, ${CONCURRENCY} at a time; reads ${RUNS} runs each`)
  const cols = Object.keys(rows[0]!)
  console.log(`| ${cols.join(" | ")} |\n|${cols.map(() => "---").join("|")}|`)
  for (const row of rows) console.log(`| ${cols.map((c) => row[c]).join(" | ")} |`)
  const first = rows[0]!
  for (const row of rows.slice(1)) {
    const ratio = (c: string) => (Number(row[c]) / Number(first[c])).toFixed(2)
    console.log(
      `${row.hits} vs ${first.hits} hits: ingest hits/s x${ratio("ingest hits/s")}, /agents p50 x${ratio("/agents p50 ms")}, /pages p50 x${ratio("/pages p50 ms")} (flat: about x1)`
    )
  }
  console.log(`whole run ${((performance.now() - t0) / 60000).toFixed(1)} minutes`)
} finally {
  await server.stop()
  if (process.env.KEEP !== "1") await admin.unsafe(`drop schema ${schema} cascade`)
  await db.end()
  await admin.end()
}
