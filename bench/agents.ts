/**
 * Agent analytics at scale: 5 million crawler hits over 90 days for one brand, plus
 * other brands' noise, on PostgreSQL; /agents and /agents/pages at 90d through the running server,
 * median and p95 latency, next to a raw SQL query of the same numbers on the raw hits table.
 *
 *   bun run bench/agents.ts            (needs PostgreSQL at 127.0.0.1:5432)
 *
 * HITS (default 5000000), NOISE (default 1000000), RUNS (default 30), RAW_RUNS (default 3), KEEP_DB=1.
 * A fresh database is created for the run and dropped after. The hits are seeded with
 * generate_series straight into crawler_hits; crawler_rollup and crawler_daily are aggregated from
 * them in SQL (what ingestion writes, in bulk). The first call of each brand builds its 7/30/90-day
 * spans from the rollup (timed separately), as the first read of a brand never read before does.
 * Then a new day: the spans made to end yesterday, read once with the reader moving them, and
 * ROLL_RUNS (default 5) times after a restart, once the background roll (SpanRollerLive) is done.
 */
import { loadavg } from "node:os"
import postgres from "postgres"
import { seedAccount, startServer } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const HITS = Number(process.env.HITS ?? 5_000_000)
const NOISE = Number(process.env.NOISE ?? 1_000_000)
const RUNS = Number(process.env.RUNS ?? 30)
const RAW_RUNS = Number(process.env.RAW_RUNS ?? 3)
const dbName = `aiv_bench_agents_${Date.now().toString(36)}`
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
await admin.unsafe(`create database ${dbName}`)
const url = new URL(adminUrl)
url.pathname = `/${dbName}`
const databaseUrl = url.toString()
const port = 18191
// As the server runs by default (the request log on), the rate limiters far above the bench's calls.
const serve = () => startServer({ DATABASE_URL: databaseUrl, RETENTION_SWEEP_MINUTES: "1440", LOG_REQUESTS: "true" }, port)
let server = await serve()
const base = server.base

const { key } = await seedAccount(base, databaseUrl, ["bench", "noise-a", "noise-b", "noise-c"])
const db = postgres(databaseUrl, { max: 1, onnotice: () => {} })
const brands = await db<Array<{ id: number; slug: string }>>`select id, slug from brands order by id`
const brandId = brands.find((b) => b.slug === "bench")!.id
const noiseIds = brands.filter((b) => b.slug !== "bench").map((b) => b.id)
const accountId = (await db<Array<{ accountId: number }>>`select id::int as "accountId" from accounts`)[0]!.accountId

// 25 real catalog bots, most traffic from the first ones.
const BOTS: ReadonlyArray<[string, string, string]> = [
  ["GPTBot", "OpenAI", "training_crawler"], ["ClaudeBot", "Anthropic", "training_crawler"],
  ["OAI-SearchBot", "OpenAI", "search_crawler"], ["PerplexityBot", "Perplexity", "search_crawler"],
  ["ChatGPT-User", "OpenAI", "browsing_agent"], ["Meta-ExternalAgent", "Meta", "training_crawler"],
  ["Bytespider", "ByteDance", "training_crawler"], ["Amazonbot", "Amazon", "search_crawler"],
  ["Claude-SearchBot", "Anthropic", "search_crawler"], ["Perplexity-User", "Perplexity", "browsing_agent"],
  ["Claude-User", "Anthropic", "browsing_agent"], ["CCBot", "Common Crawl", "training_crawler"],
  ["Applebot-Extended", "Apple", "training_crawler"], ["DuckAssistBot", "DuckDuckGo", "browsing_agent"],
  ["MistralAI-User", "Mistral AI", "browsing_agent"], ["cohere-ai", "Cohere", "browsing_agent"],
  ["YouBot", "You.com", "search_crawler"], ["Diffbot", "Diffbot", "training_crawler"],
  ["AI2Bot", "Ai2", "training_crawler"], ["DeepSeekBot", "DeepSeek", "training_crawler"],
  ["AzureAI-SearchBot", "Microsoft", "search_crawler"], ["Google-CloudVertexBot", "Google", "search_crawler"],
  ["Gemini-Deep-Research", "Google", "browsing_agent"], ["ChatGPT Agent", "OpenAI", "agentic_browser"],
  ["OpenAI MCP connector", "OpenAI", "mcp_client"]
]
const arr = (i: number) => `array[${BOTS.map((b) => `'${b[i]}'`).join(",")}]`

/** n hits for a brand over 90 days: 3,000 pages in 20 folders (power-law), plus robots.txt, llms.txt, sitemap and assets. */
const seed = (brand: number, n: number, offset: number) => `
  insert into crawler_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, method, status, channel)
  select ${brand}, 'b' || g, ${accountId}, ts, (${arr(0)})[b], (${arr(1)})[b], (${arr(2)})[b], 'www.example.com',
         case when p < 3000 then '/f' || (p % 20) || '/page-' || p || case when p % 7 = 0 then '-guide' else '' end
              when p = 3000 then '/robots.txt' when p = 3001 then '/llms.txt' when p = 3002 then '/sitemap.xml'
              else '/assets/app-' || (p - 3003) || '.js' end,
         'GET',
         case when s < 0.85 then 200 when s < 0.90 then 304 when s < 0.93 then 301 when s < 0.98 then 404 else 500 end,
         'api'
  from (
    select g, now() - random() * interval '90 days' as ts, 1 + floor(25 * power(random(), 2))::int as b,
           case when random() < 0.04 then 3000 + floor(random() * 13)::int else floor(3000 * power(random(), 3))::int end as p,
           random() as s
    from generate_series(${offset + 1}, ${offset + n}) g
  ) x`

const t0 = performance.now()
const CHUNK = 1_000_000
for (let done = 0; done < HITS; done += CHUNK) await db.unsafe(seed(brandId, Math.min(CHUNK, HITS - done), done))
for (const [i, id] of noiseIds.entries()) await db.unsafe(seed(id, Math.floor(NOISE / noiseIds.length), HITS + i * NOISE))
await db.unsafe(`
  insert into crawler_rollup (brand_id, day, path, bot, status, account_id, vendor, kind, hits, last_seen)
  select brand_id, (ts at time zone 'UTC')::date, path, bot, status, min(account_id), min(vendor), min(kind), count(*)::int, max(ts)
  from crawler_hits group by 1, 2, 3, 4, 5`)
await db.unsafe(`
  insert into crawler_daily (brand_id, day, bot, status, account_id, vendor, kind, hits)
  select brand_id, day, bot, status, min(account_id), min(vendor), min(kind), sum(hits)::int
  from crawler_rollup group by 1, 2, 3, 4`)
await db.unsafe(`vacuum analyze crawler_hits, crawler_rollup, crawler_daily`)
const rollupRows = (await db<Array<{ rollupRows: number }>>`
  select count(*)::int as "rollupRows" from crawler_rollup where brand_id = ${brandId}`)[0]!.rollupRows
console.log(
  `seeded ${HITS.toLocaleString("en")} hits for the brand and ${NOISE.toLocaleString("en")} of noise in ${((performance.now() - t0) / 1000).toFixed(0)} s;` +
    ` the brand's rollup has ${rollupRows.toLocaleString("en")} rows`
)

const call = async (path: string) => {
  const start = performance.now()
  const response = await fetch(`${base}/api/public/v1/brands/bench${path}`, { headers: { authorization: `Bearer ${key}` } })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body}`)
  return { ms: performance.now() - start, body: JSON.parse(body) }
}
const pct = (xs: Array<number>, p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ")
const loadBefore = load()
console.log(`load average before the reads: ${loadBefore}`)

// The very first read of the brand builds its spans from the 90 days of rollup (once per brand). The
// server may close the request before it finishes (Bun's idle timeout): the build still completes
// (it is not interrupted), and the retry waits for it.
const firstStart = performance.now()
for (let attempt = 1; ; attempt++) {
  try {
    await call("/agents/pages?range=90d")
    break
  } catch (error) {
    if (attempt === 5) throw error
  }
}
const firstMs = performance.now() - firstStart
console.log(`first read of the brand (builds the 7/30/90-day spans from the rollup, once): ${firstMs.toFixed(0)} ms`)

// A new day: the spans as they stood at the end of yesterday (windows ending yesterday, built here in
// SQL), then the first read of today moves them forward (days leaving subtracted, today added).
const spansEndingYesterday = async () => {
  await db.unsafe(`delete from crawler_span where brand_id = ${brandId}`)
  // One row per (path, bot), each window's figures in its columns (migration 0030).
  await db.unsafe(`
    insert into crawler_span (brand_id, path, bot, account_id, vendor, kind, ${[7, 30, 90].map((w) =>
      `hits_${w}, oks_${w}, errors_${w}, last_seen_${w}, last_ok_${w}, last_error_${w}`).join(", ")})
    select r.brand_id, r.path, r.bot, min(r.account_id), min(r.vendor), min(r.kind), ${[7, 30, 90].map((w) => {
      const of = `filter (where r.day >= d.y - ${w - 1})`
      const ok = `filter (where r.day >= d.y - ${w - 1} and r.status between 200 and 399)`
      const err = `filter (where r.day >= d.y - ${w - 1} and r.status >= 400)`
      return `coalesce(sum(r.hits) ${of}, 0), coalesce(sum(r.hits) ${ok}, 0), coalesce(sum(r.hits) ${err}, 0),
           max(r.last_seen) ${of}, max(r.last_seen) ${ok}, max(r.last_seen) ${err}`
    }).join(", ")}
    from crawler_rollup r, (select (now() at time zone 'UTC')::date - 1 as y) d
    where r.brand_id = ${brandId} and r.day between d.y - 89 and d.y
    group by r.brand_id, r.path, r.bot`)
  await db.unsafe(`delete from crawler_page_span where brand_id = ${brandId}`)
  // One row per path, each window's figures in its columns (migration 0029).
  await db.unsafe(`
    insert into crawler_page_span (brand_id, path, account_id, ${[7, 30, 90].map((w) => `hits_${w}, oks_${w}, errors_${w}, uniques_${w},
                                   ok_uniques_${w}, error_uniques_${w}, last_seen_${w}, last_ok_${w}, last_error_${w}`).join(", ")})
    select brand_id, path, min(account_id), ${[7, 30, 90].map((w) => `sum(hits_${w}), sum(oks_${w}), sum(errors_${w}),
           count(*) filter (where hits_${w} > 0), count(*) filter (where oks_${w} > 0), count(*) filter (where errors_${w} > 0),
           max(last_seen_${w}), max(last_ok_${w}), max(last_error_${w})`).join(", ")}
    from crawler_span where brand_id = ${brandId} group by brand_id, path`)
  await db.unsafe(`update crawler_span_state set as_of = (now() at time zone 'UTC')::date - 1 where brand_id = ${brandId}`)
  await db.unsafe(`vacuum analyze crawler_span, crawler_page_span`)
}
await spansEndingYesterday()
const rolled = await call("/agents/pages?range=90d")
console.log(`first read of a new day, the reader moving the spans (no background roll yet): ${rolled.ms.toFixed(0)} ms`)

// The same new day with the background roll (SpanRollerLive): the process was down over midnight UTC
// and rolls every brand's spans at start, without delaying start-up. The first read once the roll is
// done is timed, ROLL_RUNS times (a fresh process each time: its first request is a cold one).
const ROLL_RUNS = Number(process.env.ROLL_RUNS ?? 5)
const rollMs: Array<number> = []
const afterRoll: Array<number> = []
for (let i = 0; i < ROLL_RUNS; i++) {
  await server.stop()
  await spansEndingYesterday()
  const started = performance.now()
  server = await serve()
  for (let polls = 0; ; polls++) {
    const [state] = await db<Array<{ current: boolean }>>`
      select as_of = (now() at time zone 'UTC')::date as current from crawler_span_state where brand_id = ${brandId}`
    if (state?.current === true) break
    if (polls > 6000) throw new Error("the spans were not rolled within 60 s of start")
    await Bun.sleep(10)
  }
  rollMs.push(performance.now() - started)
  afterRoll.push((await call("/agents/pages?range=90d")).ms)
}
const rollLine = ROLL_RUNS === 0 ? "" : `first read of a new day after the background roll: median ${pct(afterRoll, 0.5).toFixed(0)} ms, ` +
  `p95 ${pct(afterRoll, 0.95).toFixed(0)} ms, max ${Math.max(...afterRoll).toFixed(0)} ms over ${ROLL_RUNS} restarts ` +
  `(start to spans current: median ${pct(rollMs, 0.5).toFixed(0)} ms)`
if (rollLine !== "") console.log(rollLine)

const fromOf = (days: number) => new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10)
const from = fromOf(90)
const rawPages = (where: string, order: string) => `
  select path, count(*) as hits, count(*) filter (where status >= 400) as errors, count(distinct bot) as uniques,
         array_agg(distinct bot) as bots, max(ts) as last_seen, count(*) over () as total
  from crawler_hits where brand_id = ${brandId} and ts >= '${from}'::date ${where}
  group by path order by ${order}, path collate "C" limit 100`
const CASES: ReadonlyArray<{ name: string; path: string; raw: string; check?: (body: any, raw: Array<any>) => void }> = [
  {
    name: "/agents (KPIs, trend, breakdowns, top pages)",
    path: "/agents?range=90d",
    raw: `select (select count(*) from crawler_hits where brand_id = ${brandId} and ts >= '${from}'::date) as hits,
                 (select count(distinct path) from crawler_hits where brand_id = ${brandId} and ts >= '${from}'::date) as pages,
                 (select json_agg(t) from (select (ts at time zone 'UTC')::date, kind, count(*) from crawler_hits
                    where brand_id = ${brandId} and ts >= '${from}'::date group by 1, 2) t) as trend,
                 (select json_agg(t) from (select bot, status, count(*) from crawler_hits
                    where brand_id = ${brandId} and ts >= '${from}'::date group by 1, 2) t) as breakdowns,
                 (select json_agg(t) from (${rawPages("", "hits desc").replace("limit 100", "limit 10")}) t) as top`,
    check: (body, raw) => {
      if (body.kpis.hits !== Number(raw[0].hits) || body.kpis.pages !== Number(raw[0].pages)) {
        throw new Error(`/agents differs from raw SQL: ${JSON.stringify(body.kpis)} vs ${raw[0].hits}, ${raw[0].pages}`)
      }
    }
  },
  { name: "/agents/pages unfiltered", path: "/agents/pages?range=90d", raw: rawPages("", "hits desc") },
  { name: "/agents/pages bot=GPTBot", path: "/agents/pages?range=90d&bot=GPTBot", raw: rawPages(`and bot = 'GPTBot'`, "hits desc") },
  // The shortest window with a crawler filter: the span rows of the brand read for the fewest hits.
  {
    name: "/agents/pages bot=GPTBot, range=7d",
    path: "/agents/pages?range=7d&bot=GPTBot",
    raw: rawPages(`and bot = 'GPTBot'`, "hits desc").replace(`'${from}'::date`, `'${fromOf(7)}'::date`)
  },
  {
    name: "/agents/pages folder=f3, q=guide",
    path: "/agents/pages?range=90d&folder=f3&q=guide",
    raw: rawPages(`and path like '/f3/%' and strpos(lower(path), 'guide') > 0`, "hits desc")
  },
  { name: "/agents/pages sort=uniques", path: "/agents/pages?range=90d&sort=uniques", raw: rawPages("", "uniques desc") },
  ...[7, 30].map((days) => ({
    name: `/agents/pages unfiltered, range=${days}d`,
    path: `/agents/pages?range=${days}d`,
    raw: rawPages("", "hits desc").replace(`'${from}'::date`, `'${fromOf(days)}'::date`)
  })),
  ...[7, 30].map((days) => ({
    name: `/agents (KPIs, trend, breakdowns, top pages), range=${days}d`,
    path: `/agents?range=${days}d`,
    raw: `select (select count(*) from crawler_hits where brand_id = ${brandId} and ts >= '${fromOf(days)}'::date) as hits,
                 (select count(distinct path) from crawler_hits where brand_id = ${brandId} and ts >= '${fromOf(days)}'::date) as pages`,
    check: (body: any, raw: Array<any>) => {
      if (body.kpis.hits !== Number(raw[0].hits) || body.kpis.pages !== Number(raw[0].pages)) {
        throw new Error(`/agents ${days}d differs from raw SQL: ${JSON.stringify(body.kpis)} vs ${raw[0].hits}, ${raw[0].pages}`)
      }
    }
  })),
  // What to fix first (docs/actions.md): its crawler actions checked against the raw hits.
  ...[90, 30, 7].map((days) => ({
    name: `/actions, range=${days}d`,
    path: `/actions?range=${days}d`,
    raw: `select path, count(*) as hits, count(*) filter (where status >= 400) as errors
          from crawler_hits where brand_id = ${brandId} and ts >= '${fromOf(days)}'::date
          group by path having count(*) >= 10 and count(*) filter (where status >= 400) * 100 >= count(*) * 20
          order by errors desc, path collate "C" limit 20`,
    check: (body: any, raw: Array<any>) => {
      const ours = body.actions.filter((a: any) => a.kind === "fix_crawler_errors").map((a: any) => `${a.evidence.path}:${a.evidence.hits}:${a.evidence.error_hits}`).join(",")
      const theirs = raw.map((p: any) => `${p.path}:${p.hits}:${p.errors}`).join(",")
      if (ours !== theirs) throw new Error(`/actions ${days}d differs from raw SQL: ${ours} vs ${theirs}`)
    }
  }))
]

const rows: Array<string> = []
for (const c of CASES) {
  const times: Array<number> = []
  let last: any
  for (let i = 0; i < RUNS + 3; i++) {
    const r = await call(c.path)
    if (i >= 3) times.push(r.ms)
    last = r.body
  }
  const rawTimes: Array<number> = []
  let raw: Array<any> = []
  for (let i = 0; i < RAW_RUNS; i++) {
    const start = performance.now()
    raw = await db.unsafe(c.raw)
    rawTimes.push(performance.now() - start)
  }
  if (c.check) c.check(last, raw)
  else {
    const ours = last.pages.map((p: any) => `${p.path}:${p.hits}:${p.errors}:${p.uniques}`).join(",")
    const theirs = raw.map((p: any) => `${p.path}:${p.hits}:${p.errors}:${p.uniques}`).join(",")
    if (ours !== theirs || last.total !== Number(raw[0]?.total ?? 0)) throw new Error(`${c.name}: answer differs from the raw SQL`)
  }
  const med = pct(times, 0.5)
  const rawMed = pct(rawTimes, 0.5)
  rows.push(
    `| ${c.name} | ${med.toFixed(1)} | ${pct(times, 0.95).toFixed(1)} | ${rawMed.toFixed(0)} | ${(rawMed / med).toFixed(1)}x |`
  )
  console.log(rows.at(-1))
}

const loadAfter = load()

await server.stop()
await db.end()
// KEEP_DB=1 keeps the seeded database (its name is printed) for EXPLAIN ANALYZE.
if (process.env.KEEP_DB === "1") console.log(`kept database ${dbName}`)
else await admin.unsafe(`drop database ${dbName} with (force)`)
await admin.end()

console.log(`\n${HITS.toLocaleString("en")} hits over 90 days (+ ${NOISE.toLocaleString("en")} noise), ${RUNS} calls each; load average (1, 5, 15 min) before the reads ${loadBefore}, after ${loadAfter}`)
console.log(`first read of the brand (spans built once): ${firstMs.toFixed(0)} ms; first read of a new day, the reader moving the spans: ${rolled.ms.toFixed(0)} ms`)
if (rollLine !== "") console.log(rollLine)
console.log("| call | median ms | p95 ms | raw SQL on crawler_hits, median ms | raw / ours |")
console.log("| --- | --- | --- | --- | --- |")
for (const row of rows) console.log(row)
console.log("target: median < 100 ms, p95 < 250 ms; answers checked equal to the raw SQL's")
