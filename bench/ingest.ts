/**
 * Log-drain ingestion end to end on PostgreSQL, side by side with a bare COPY of the same rows
 * into the same table, in the same run.
 *
 *   bun run bench/ingest.ts            (needs PostgreSQL at 127.0.0.1:5432)
 *
 * Drain (ONLY=drain; docs/performance.md): deliveries of RECORDS records (default 2,000; 100 and
 * 20,000 for how cost grows; gzip NDJSON, about 20% AI-crawler requests, the rest browsers, a few
 * AI referrals and non-request records) go to a running server (src/app/main.ts on a fresh database,
 * pinned to core 0, rate limiters far above the load) through POST
 * /api/public/v1/agents/ingest/drain, CONCURRENCY (4) in flight: decoding, classification, the cap,
 * hits + rollups + usage in one transaction. The baseline is the bare limit: one COPY FROM STDIN
 * stream (postgres.js) of every record of the same deliveries as a row of a table shaped like
 * crawler_hits (same columns, NOT NULL kept) WITHOUT the production primary key, index and foreign
 * keys. This process and the PostgreSQL backends of the bench database are pinned to core 1
 * (PIN_POSTGRES=0 leaves the backends alone). An unmeasured warm-up round of each side first (the
 * server's JIT compiles the path), then rounds alternate (ROUNDS, default 3); medians. An ingest
 * round ends when the aggregator has folded its hits (crawler_fold_queue empty), not when the last
 * delivery is answered: the fold is the deliveries' work too (both rates are printed).
 * Per delivery: server CPU (utime + stime of the server process tree, /proc/<pid>/stat) and
 * PostgreSQL CPU (the bench database's client backends, read from /proc of each backend process;
 * pg_stat_statements is not preloaded here), over the concurrent rounds. Then the p50 latency of
 * deliveries sent one at a time. The ratio (ingest records/s / COPY rows/s) is the last line.
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres); the
 * database is created for the run and dropped after.
 *
 * Then the log sources (docs/ingestion.md): the decode cost per record of each format next to the
 * Vercel decoder's (the same requests, 2,000-record gzip deliveries, in process), and `bun run cli
 * ship` of a SHIP_LINES-line (default 1,000,000) combined log to the same server, with its peak RSS.
 * ONLY=drain,formats,ship picks parts (default all).
 *
 * The drain's mix: `--mix=heavy` (default, or MIX=heavy): every record from an address drawn anywhere in
 * IPv4 (no two deliveries share a verification look-up: crawler hits outside their operator's ranges are
 * judged on each, and Amazonbot's by reverse DNS), crawlers GPTBot, ClaudeBot, PerplexityBot,
 * OAI-SearchBot, ChatGPT-User, Amazonbot, meta-externalagent and Bytespider, pages Zipf over 2,000 paths.
 * `--mix=light`: the earlier mix (1,000 addresses of one /16, six crawlers, 10 paths). `--mix=both`
 * runs both on the same server, heavy first, and prints both. RDNS=0 leaves Amazonbot out of the heavy mix
 * (every crawler then verifies by range alone).
 */
import { spawn, spawnSync } from "bun"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import postgres from "postgres"
import { anyIpv4, backendCpu, backendCpuDeltaMs, loadAverage, median, mixes, pinBackends, queueFolded, seeded, startScriptEnv, treeCpuMs, zipf } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const rounds = Number(process.env.ROUNDS ?? 3)
const RECORDS = Number(process.env.RECORDS ?? 2000)
if (!(RECORDS >= 50 && RECORDS <= 50_000)) throw new Error("RECORDS is 50 to 50,000")
// About 80,000 records a round whatever the delivery size (at least 4 deliveries, at most 800).
const perRound = Number(process.env.DELIVERIES ?? Math.min(800, Math.max(4, Math.round(80_000 / RECORDS))))
const latencyDeliveries = Number(process.env.LATENCY_DELIVERIES ?? Math.min(30, Math.max(5, Math.round(200_000 / RECORDS))))
const concurrency = Number(process.env.CONCURRENCY ?? 4)
const pinPostgres = process.env.PIN_POSTGRES !== "0"
const PORT = 18191
const base = `http://127.0.0.1:${PORT}`

const only = new Set((process.env.ONLY ?? "drain,formats,ship").split(","))
const dbName = `aiv_bench_ingest_${Date.now().toString(36)}`
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
await admin.unsafe(`create database ${dbName}`)
const url = new URL(adminUrl)
url.pathname = `/${dbName}`
const databaseUrl = url.toString()
const dataDir = mkdtempSync(join(tmpdir(), "aiv-bench-ingest-"))

const has = (cmd: string) => spawnSync(["sh", "-c", `command -v ${cmd}`]).exitCode === 0
const pin = (core: number, argv: Array<string>) => (has("taskset") ? ["taskset", "-c", String(core), ...argv] : argv)
if (has("taskset")) spawnSync(["taskset", "-cp", "1", String(process.pid)])

const server = spawn(pin(0, ["bun", "run", "src/app/main.ts"]), {
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    // Rate limiters far above the load (they still run on every request).
    RATE_LIMIT_API_KEY: "1000000000/1",
    RATE_LIMIT_API_IP: "1000000000/1",
    RATE_LIMIT_AUTH_IP: "1000/1",
    ...startScriptEnv(),
    // e.g. SERVER_BUN_OPTIONS="--cpu-prof-md --cpu-prof-dir=/tmp/prof" profiles the server alone.
    ...(process.env.SERVER_BUN_OPTIONS ? { BUN_OPTIONS: process.env.SERVER_BUN_OPTIONS } : {})
  },
  stdout: "ignore",
  stderr: "inherit"
})
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break
  } catch {
    // not up yet
  }
  if (i > 300) throw new Error("server did not come up")
  await Bun.sleep(100)
}

// Seed through the real API: an enterprise account (cap 50,000,000), one brand, a key.
const signup = await fetch(`${base}/api/v1/auth/signup`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: "bench@example.com", password: "bench-password", account_name: "Bench" })
})
const cookie = (signup.headers.get("set-cookie") ?? "").split(";")[0]!
const db = postgres(databaseUrl, { max: 4, onnotice: () => {} })
// Reads /proc CPU of the backends; its own backend is left out.
const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} })
await db`update accounts set plan_id = 'enterprise'`
const brand = (await (await fetch(`${base}/api/v1/me/brands`, {
  method: "POST",
  headers: { "content-type": "application/json", cookie, "sec-fetch-site": "same-origin" },
  body: JSON.stringify({ brand_slug: "acme", brand_name: "Acme", domain: "acme.example", vertical: "saas" })
})).json()) as { id: number; site_id: string }
const { key } = (await (await fetch(`${base}/api/v1/me/api-keys`, {
  method: "POST",
  headers: { "content-type": "application/json", cookie, "sec-fetch-site": "same-origin" },
  body: JSON.stringify({ name: "bench" })
})).json()) as { key: string }
const accountId = (await db<Array<{ account_id: number }>>`select account_id::int from brands where id = ${brand.id}`)[0]!.account_id

// ---------------------------------------------------------------------------
// Deliveries
// ---------------------------------------------------------------------------

const LIGHT_CRAWLERS = [
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
  "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
  "Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.0.0 Safari/537.36"
]
const HEAVY_CRAWLERS = [
  ...LIGHT_CRAWLERS,
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot"
]
const CRAWLERS = LIGHT_CRAWLERS
// RDNS=0 leaves Amazonbot (the one crawler of the mix verified by reverse DNS) out of the heavy mix.
if (process.env.RDNS === "0") HEAVY_CRAWLERS.pop()
const BROWSERS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
]
const PATHS = ["/", "/pricing", "/blog/ai-search-2026", "/docs/getting-started", "/robots.txt", "/llms.txt", "/_next/static/chunks/main.js", "/about", "/careers", "/blog/launch?utm_source=x"]
const SOURCES = ["lambda", "edge", "static", "external"]

let seq = 0
const T0 = Date.now() - 3_600_000
interface Row {
  key: string
  ts: number
  ua: string
  path: string
  status: number
  ip: string
}
const rand = seeded(7)
const zipfPage = zipf(2_000, rand)
const makeDelivery = (mix: "heavy" | "light") => {
  const lines: Array<string> = []
  const rows: Array<Row> = []
  for (let i = 0; i < RECORDS; i++) {
    const n = seq++
    const id = `${T0 + n}${String(n).padStart(10, "0")}`
    const ts = T0 + n
    if (i % 50 === 49) {
      lines.push(JSON.stringify({ id, message: "GET /api/users 200 in 12ms", timestamp: ts, type: "stdout", source: "lambda", projectId: "prj_bench", deploymentId: "dpl_bench", host: "acme-bench.vercel.app", requestId: `req_${n}` }))
      rows.push({ key: id, ts, ua: "", path: "/api/users", status: 200, ip: "" })
      continue
    }
    const crawler = i % 5 === 0
    const crawlers = mix === "heavy" ? HEAVY_CRAWLERS : LIGHT_CRAWLERS
    const ua = crawler ? crawlers[n % crawlers.length]! : BROWSERS[n % BROWSERS.length]!
    const path = mix === "heavy" ? `/docs/page-${zipfPage()}` : PATHS[n % PATHS.length]!
    const ip = mix === "heavy" ? anyIpv4(rand) : `203.0.${n % 250}.${n % 200}`
    const status = n % 17 === 0 ? 404 : n % 97 === 0 ? -1 : 200
    const referer = !crawler && n % 23 === 0 ? "https://chatgpt.com/" : "https://www.google.com/"
    lines.push(JSON.stringify({
      id, message: "", timestamp: ts, type: "stdout", source: SOURCES[n % SOURCES.length], projectId: "prj_bench", deploymentId: "dpl_bench",
      host: "acme-bench.vercel.app", path: path.split("?")[0], statusCode: status, requestId: `req_${n}`,
      proxy: {
        timestamp: ts, method: "GET", host: "www.acme.example", path, userAgent: [ua], referer, region: "fra1", statusCode: status,
        clientIp: ip, scheme: "https", vercelCache: "MISS"
      }
    }))
    rows.push({ key: id, ts, ua, path, status, ip })
  }
  return { body: new Uint8Array(gzipSync(lines.join("\n") + "\n")), raw: lines.reduce((s, l) => s + l.length + 1, 0), rows }
}

const deliver = async (body: Uint8Array) => {
  const started = performance.now()
  const response = await fetch(`${base}/api/public/v1/agents/ingest/drain?site_id=${brand.site_id}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
    body: body as BodyInit
  })
  const out = (await response.json()) as { accepted: number; scanned: number }
  if (response.status !== 200 || out.scanned !== RECORDS) throw new Error(`delivery failed: ${response.status} ${JSON.stringify(out)}`)
  return { ms: performance.now() - started, accepted: out.accepted }
}

const ingestRound = async (deliveries: Array<{ body: Uint8Array }>) => {
  let next = 0
  let accepted = 0
  if (pinPostgres) await pinBackends(monitor, dbName, 1)
  const cpu0 = await treeCpuMs(server.pid)
  const pg0 = await backendCpu(monitor, dbName)
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < deliveries.length) {
      const d = deliveries[next++]!
      const result = await deliver(d.body)
      accepted += result.accepted
    }
  }))
  const answered = (performance.now() - started) / 1000
  // The round's work is done when the aggregator has folded its hits too: otherwise the fold runs during
  // the next COPY round, on its core, and its CPU counts there (a ratio flattered by deferred work).
  await queueFolded(monitor, 2)
  const seconds = (performance.now() - started) / 1000
  const serverMs = ((await treeCpuMs(server.pid)) - cpu0) / deliveries.length
  const postgresMs = backendCpuDeltaMs(pg0, await backendCpu(monitor, dbName)) / deliveries.length
  return { rps: (deliveries.length * RECORDS) / seconds, answeredRps: (deliveries.length * RECORDS) / answered, accepted, serverMs, postgresMs }
}

const tsv = (s: string) => s.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
/** Every record of the deliveries as a crawler_hits row, COPYed in one stream (the text is built before the clock starts). */
const copyRound = async (deliveries: Array<{ rows: Array<Row> }>, round: number) => {
  if (pinPostgres) await pinBackends(monitor, dbName, 1)
  const pg0 = await backendCpu(monitor, dbName)
  const chunks: Array<string> = []
  for (const d of deliveries) {
    let text = ""
    for (const r of d.rows) {
      const q = r.path.indexOf("?")
      text += `${brand.id}\tcopy${round}:${r.key}\t${accountId}\t${new Date(r.ts).toISOString()}\tGPTBot\tOpenAI\ttraining_crawler\twww.acme.example\t` +
        `${tsv(q === -1 ? r.path : r.path.slice(0, q))}\t${q === -1 ? "" : tsv(r.path.slice(q + 1))}\tGET\t${r.status === -1 ? "\\N" : r.status}\t` +
        `${r.ip === "" ? "\\N" : r.ip}\t\\N\thttps://www.google.com/\tdrain\n`
    }
    chunks.push(text)
  }
  const rows = deliveries.length * RECORDS
  const started = performance.now()
  const stream = await db`copy bare_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, query, method, status,
                          client_ip, country, referrer, channel) from stdin`.writable()
  for (const chunk of chunks) {
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once("drain", resolve))
  }
  // A refused COPY reports on the stream's error event, not through end's callback: listen to both, never hang.
  await new Promise<void>((resolve, reject) => {
    stream.once("error", reject)
    stream.end((error?: Error | null) => (error ? reject(error) : resolve()))
  })
  const seconds = (performance.now() - started) / 1000
  const postgresMs = backendCpuDeltaMs(pg0, await backendCpu(monitor, dbName)) / deliveries.length
  return { rps: rows / seconds, postgresMs }
}

const pct = (xs: Array<number>, p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
let accepted = 0
const drainSummaries: Array<string> = []
if (only.has("drain")) {
  // The bare limit: crawler_hits' columns (with NOT NULL and defaults: columns the COPY does not name take their
  // default, as in the production insert), none of its keys, indexes or foreign keys.
  await db`create table bare_hits (like crawler_hits including defaults)`
}
for (const mix of only.has("drain") ? mixes() : []) {
  console.log(`[${mix}] building ${rounds} x ${perRound} deliveries of ${RECORDS} records ...`)
  // A warm-up round as large as a timed one, on both sides: with five deliveries the first timed rounds
  // measured the server's JIT compiling the path (11 to 13 ms of server CPU a delivery, against 8.4 warm).
  const warm = Array.from({ length: Math.max(5, perRound) }, () => makeDelivery(mix))
  const batches = Array.from({ length: rounds }, () => Array.from({ length: perRound }, () => makeDelivery(mix)))
  const latencySet = Array.from({ length: latencyDeliveries }, () => makeDelivery(mix))
  const sample = batches[0]![0]!
  console.log(`[${mix}] one delivery: ${(sample.raw / 1e6).toFixed(2)} MB NDJSON, ${(sample.body.length / 1e3).toFixed(0)} KB gzip`)
  await ingestRound(warm)
  await copyRound(warm, -1)
  const loadBefore = await loadAverage()
  console.log(`[${mix}] load average before: ${loadBefore}`)

  const ingestRps: Array<number> = []
  const answeredRps: Array<number> = []
  const copyRps: Array<number> = []
  const serverMs: Array<number> = []
  const postgresMs: Array<number> = []
  const copyPostgresMs: Array<number> = []
  const ratios: Array<number> = []
  let mixAccepted = 0
  for (let round = 0; round < rounds; round++) {
    const ingest = await ingestRound(batches[round]!)
    mixAccepted += ingest.accepted
    ingestRps.push(ingest.rps)
    answeredRps.push(ingest.answeredRps)
    serverMs.push(ingest.serverMs)
    postgresMs.push(ingest.postgresMs)
    const copy = await copyRound(batches[round]!, round)
    copyRps.push(copy.rps)
    copyPostgresMs.push(copy.postgresMs)
    ratios.push(ingest.rps / copy.rps)
    console.log(
      `[${mix}] round ${round + 1}: ingest ${ingest.rps.toFixed(0)} records/s folded (${ingest.answeredRps.toFixed(0)} answered; ${ingest.serverMs.toFixed(1)} ms server + ${ingest.postgresMs.toFixed(1)} ms PostgreSQL CPU/delivery), ` +
        `bare COPY ${copy.rps.toFixed(0)} rows/s (${copy.postgresMs.toFixed(1)} ms PostgreSQL CPU per ${RECORDS} rows); ratio ${(ingest.rps / copy.rps).toFixed(2)}; load ${await loadAverage()}`
    )
  }
  accepted += mixAccepted

  // Latency: one delivery at a time.
  const latencies: Array<number> = []
  for (const d of latencySet) latencies.push((await deliver(d.body)).ms)
  const i = median(ingestRps)
  const c = median(copyRps)
  drainSummaries.push(
    `POST /agents/ingest/drain, ${mix} mix: ${RECORDS}-record gzip NDJSON deliveries (~20% crawler hits), PostgreSQL, ${rounds} rounds x ${perRound} deliveries, ${concurrency} in flight`,
    `  load average before / after: ${loadBefore} / ${await loadAverage()}; crawler hits acknowledged in the timed rounds: ${mixAccepted}`,
    `  delivery latency, one at a time: p50 ${median(latencies).toFixed(1)} ms, p90 ${pct(latencies, 0.9).toFixed(1)} ms (goal p50 < 50 ms)`,
    `  ingestion end to end, until the aggregator has folded the round's hits: ${i.toFixed(0)} records/s (${(i / RECORDS).toFixed(1)} deliveries/s; ` +
      `${median(answeredRps).toFixed(0)} records/s until the last delivery was answered), ` +
      `${median(serverMs).toFixed(1)} ms server + ${median(postgresMs).toFixed(1)} ms PostgreSQL CPU per delivery`,
    `  bare COPY of the same records into a crawler_hits-shaped table without keys or indexes: ${c.toFixed(0)} rows/s, ` +
      `${median(copyPostgresMs).toFixed(1)} ms PostgreSQL CPU per ${RECORDS} rows`,
    `  ratio per round: ${ratios.map((r) => r.toFixed(2)).join(", ")}`,
    `ratio (${mix}): ${(i / c).toFixed(2)} (goal >= ${mix === "heavy" ? "0.5" : "0.40"})`
  )
}

// Log sources: decode cost per format, in process (alternating rounds, medians).
const formatLines: Array<string> = []
if (only.has("formats")) {
  const { makeDrainDecoder } = await import("../src/ingestion/DrainDecoder.js")
  const { body: formatBody } = await import("./formats.js")
  const decoder = makeDrainDecoder({ maxInflatedBytes: 64 * 1024 * 1024 })
  const requests = Array.from({ length: 10 * RECORDS }, (_, n) => {
    const crawler = n % 5 === 0
    return {
      id: `r${n.toString(36)}x${T0.toString(36)}`,
      ts: T0 + n,
      ua: crawler ? CRAWLERS[n % CRAWLERS.length]! : BROWSERS[n % BROWSERS.length]!,
      path: PATHS[n % PATHS.length]!,
      status: n % 17 === 0 ? 404 : 200,
      ip: `203.0.${n % 250}.${n % 200}`,
      referrer: !crawler && n % 23 === 0 ? "https://chatgpt.com/" : ""
    }
  })
  const formats = ["vercel", "cloudflare", "fastly", "akamai", "netlify", "cloudfront", "combined"] as const
  const deliveries = Object.fromEntries(formats.map((f) => [f, Array.from({ length: 10 }, (_, i) =>
    new Uint8Array(gzipSync(formatBody(f, requests.slice(i * RECORDS, (i + 1) * RECORDS)))))]))
  const perRecord: Record<string, Array<number>> = Object.fromEntries(formats.map((f) => [f, []]))
  const now = Date.now()
  for (let round = 0; round < 5; round++) {
    for (const f of formats) {
      const t = performance.now()
      let n = 0
      for (const d of deliveries[f]!) n += decoder.decode(d, now, "auto").requests.length
      if (n !== 10 * RECORDS) throw new Error(`${f}: decoded ${n} requests of ${10 * RECORDS}`)
      if (round > 0) perRecord[f]!.push(((performance.now() - t) * 1e6) / n)
    }
  }
  const baseline = median(perRecord.vercel!)
  formatLines.push(`decode cost per record (gunzip + parse + fields, detected with auto; ${RECORDS}-record gzip deliveries; median of 4 rounds):`)
  for (const f of formats) {
    const ns = median(perRecord[f]!)
    formatLines.push(`  ${f.padEnd(10)} ${(ns / 1000).toFixed(2)} µs/record, ${(ns / baseline).toFixed(2)}x vercel (target <= 1.5x)`)
  }
  for (const line of formatLines) console.log(line)
}

// ship: a combined log of SHIP_LINES lines to this server, through the batch endpoint.
const shipLines: Array<string> = []
if (only.has("ship")) {
  const { clf } = await import("./formats.js")
  const lines = Number(process.env.SHIP_LINES ?? 1_000_000)
  const file = join(dataDir, "access.log")
  const writer = Bun.file(file).writer()
  for (let n = 0; n < lines; n++) {
    const crawler = n % 5 === 0
    const ua = crawler ? CRAWLERS[n % CRAWLERS.length]! : BROWSERS[n % BROWSERS.length]!
    writer.write(`203.0.${n % 250}.${n % 200} - - [${clf(T0 + n * 3)}] "GET ${PATHS[n % PATHS.length]!}${n % 3 === 0 ? "" : `?n=${n}`} HTTP/1.1" ${n % 17 === 0 ? 404 : 200} ${n % 9000} "-" "${ua}"\n`)
  }
  await writer.end()
  const size = Bun.file(file).size
  const started = performance.now()
  const child = spawn(pin(1, ["bun", "run", "src/app/cli.ts", "ship", file, "--site", brand.site_id, "--key", key, "--url", base, "--quiet"]), {
    stdout: "pipe",
    stderr: "inherit"
  })
  const summary = await new Response(child.stdout).text()
  const code = await child.exited
  const seconds = (performance.now() - started) / 1000
  shipLines.push(`bun run cli ship of a ${lines}-line combined log (${(size / 1e6).toFixed(0)} MB, 20% crawler lines) to this server: exit ${code}`)
  shipLines.push(`  ${(lines / seconds).toFixed(0)} lines/s end to end (target >= 100,000), ${seconds.toFixed(1)} s`)
  shipLines.push(`  ${summary.trim()}`)
  for (const line of shipLines) console.log(line)
}

const hits = (await db<Array<{ hits: number }>>`select count(*)::int as hits from crawler_hits`)[0]!.hits
const loadAfter = await loadAverage()
const events = (await db<Array<{ events: number }>>`select sum(events)::int as events from monthly_usage`)[0]!.events

server.kill()
await server.exited
await db.end()
await monitor.end()
await admin.unsafe(`drop database ${dbName} with (force)`)
await admin.end()
rmSync(dataDir, { recursive: true, force: true })

if (!only.has("drain")) process.exit(0)
for (const line of [...formatLines, ...shipLines]) console.log(line)
console.log(`stored: ${hits} crawler hits; monthly usage ${events} (accepted ${accepted} in the timed rounds); load average after: ${loadAfter}`)
for (const line of drainSummaries) console.log(line)
