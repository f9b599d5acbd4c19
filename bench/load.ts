/**
 * Mixed load, open loop, and the cost of each crawler-heavy request alone (docs/performance.md).
 *
 *   bun run bench/load.ts                  the crawler-heavy mix (default)
 *   bun run bench/load.ts --mix=light      the earlier, lighter mix
 *   bun run bench/load.ts --mix=both       both, heavy first, each summarised
 *
 * PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL); every round makes a fresh database, dropped after
 * (KEEP_DB=1 keeps it). Each round (ROUNDS, default 3; medians over the rounds):
 *   1. One server process (src/app/main.ts) pinned to core 0, rate limiters far above the load, and
 *      the baseline (bench/baseline-brands-server.ts: Bun.serve + postgres.js) pinned to core 0 on the
 *      same database; this load generator on core 1 (taskset; PostgreSQL not pinned).
 *   2. An enterprise account with 3 brands and a key, through the API; SEED (50,000) crawler hits over
 *      the last 30 days through drain deliveries of 2,000 records.
 *   3. Alone, each at COST_RATE (200) requests a second, open loop, COST_SECONDS (8) measured after half
 *      as long unmeasured: /agents?range=30d, /agents/pages?range=30d&limit=50 (ours), GET /brands of the
 *      baseline (the floor of an authenticated read through a bare server: a key look-up and one query),
 *      then, after the load, the 20-record delivery on ours and on the baseline. Each starts once the
 *      aggregator has folded every queued hit (the seed's, the open loop's): a request's cost, not a
 *      backlog's; a delivery's own hits are folded while it is measured. Server CPU (utime +
 *      stime of the process tree, /proc/<pid>/stat) and PostgreSQL CPU (the client backends of the
 *      round's database, /proc of each) over the measured seconds, per answered request.
 *   4. Open loop (bench/support.ts openLoop): RATE (1000) requests a second for SECONDS (60), sent on
 *      schedule whatever the answers, at most MAX_IN_FLIGHT (2,000) open (past that a due request is
 *      not sent and counted as unsent), 20% each of GET /brands, GET /brands/{slug}, the two reads
 *      above and the 20-record delivery. Latency from each request's scheduled time; achieved = answers
 *      200/202 per second of the window (or until the last answer, if later); records lost = crawler
 *      hits of the deliveries answered 200 minus the growth of /agents?range=7d kpis.hits over the brands
 *      (and each answer's `accepted` checked against the delivery's crawler hits), counted once every
 *      request sent has settled (answers after the 30 s grace included: they are errors of the load,
 *      but their hits are stored).
 *
 * The deliveries. Heavy: 18 of 20 records AI crawlers (GPTBot, ClaudeBot, PerplexityBot, OAI-SearchBot,
 * ChatGPT-User, each from an address inside its operator's published prefixes, the range files the server
 * loads: every hit verifies by range), 2 browsers from anywhere in IPv4, pages Zipf over 2,000. Light:
 * 5 GPTBot hits and 15 browsers from one address, pages drawn with a cube law over 2,000.
 */
import postgres from "postgres"
import {
  backendCpu,
  backendCpuDeltaMs,
  drainBody,
  freshDatabase,
  heavyDeliveries,
  loadAverage,
  median,
  mixes,
  openLoop,
  type OpenLoopResult,
  peakRssMiB,
  percentile,
  queueFolded,
  seedAccount,
  seedDeliveries,
  startScriptEnv,
  startServer,
  treeCpuMs,
  treeRunDelayMs
} from "./support.js"

// Pin this process to core 1 (the servers get core 0), unless already restricted. Bun's fetch opens at
// most 256 requests at once unless told: an open loop needs as many as MAX_IN_FLIGHT.
if (Bun.which("taskset") !== null && process.env.LOAD_PINNED === undefined) {
  const child = Bun.spawn(["taskset", "-c", "1", ...process.argv], {
    env: { ...process.env, LOAD_PINNED: "1", BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
    stdio: ["inherit", "inherit", "inherit"]
  })
  process.exit(await child.exited)
}

const seconds = Math.min(300, Number(process.env.SECONDS ?? 60))
const rate = Math.min(5000, Number(process.env.RATE ?? 1000))
const seed = Math.min(2_000_000, Number(process.env.SEED ?? 50_000))
const costRate = Math.min(2000, Number(process.env.COST_RATE ?? 200))
const costSeconds = Math.min(60, Number(process.env.COST_SECONDS ?? 8))
const rounds = Math.max(1, Number(process.env.ROUNDS ?? 3))
const maxInFlight = Number(process.env.MAX_IN_FLIGHT ?? 2_000)
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const KINDS = ["GET /brands", "GET /brands/{slug}", "/agents?range=30d", "/agents/pages?range=30d&limit=50", "drain (20 records)"] as const
const COSTS = ["/agents?range=30d", "/agents/pages?range=30d&limit=50", "floor: bare GET /brands", "drain (20 records)", "baseline drain (20 records)"] as const
type Cost = { server: number; pg: number; errors: number; why: string }

interface RoundResult {
  costs: Array<Cost>
  load: OpenLoopResult
  serverCpuPct: number
  serverWaitPct: number
  pgCpuPct: number
  sentHits: number
  /** Crawler hits in the deliveries answered 200 (what the sender knows was delivered). */
  answeredHits: number
  /** Answers 200 whose `accepted` is not the delivery's crawler hits (every record is new: it must be). */
  wrongAccepted: number
  accepted: number
  /** Some requests of the load were still open 3 minutes after the grace when the hits were counted. */
  unsettled: boolean
  stored: number
  rssMiB: number
  loadAvg: Array<string>
  verification: string
}

const round = async (mix: "heavy" | "light", n: number): Promise<RoundResult> => {
  const loadAvg = [await loadAverage()]
  const db = await freshDatabase(adminUrl, "aiv_load")
  const dbName = new URL(db.url).pathname.slice(1)
  const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18431, 0)
  const observer = postgres(adminUrl, { max: 1, onnotice: () => {} })
  const local = postgres(db.url, { max: 1, onnotice: () => {} })
  let baseline: ReturnType<typeof Bun.spawn> | undefined
  try {
    const { key, sites } = await seedAccount(server.base, db.url, 3)
    const auth = { authorization: `Bearer ${key}` }
    await local`create table bare_hits (like crawler_hits including defaults)`
    baseline = Bun.spawn([...(Bun.which("taskset") === null ? [] : ["taskset", "-c", "0"]), "bun", "run", "bench/baseline-brands-server.ts"], {
      env: { ...process.env, ...startScriptEnv(), DATABASE_URL: db.url, PORT: "18432" },
      stdout: "ignore",
      stderr: "inherit"
    })
    const bare = "http://127.0.0.1:18432"

    // A site has a finite set of pages, crawled unevenly: 2,000 paths.
    const heavy = await heavyDeliveries(1000 + n)
    let draw = n
    const cubePage = () => {
      draw = (draw * 1103515245 + 12345) % 2147483648
      const u = draw / 2147483648
      return `/docs/page-${Math.floor(2000 * u * u * u)}`
    }
    const body20 = (tag: string) => (mix === "heavy" ? heavy(tag, 20, 18) : drainBody(tag, 5, 15, Date.now(), cubePage))
    const hitsPer20 = mix === "heavy" ? 18 : 5
    const drainTo = (base: string, site: { siteId: string }, body: string) =>
      fetch(`${base}/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, { method: "POST", headers: auth, body })

    // Seed: `seed` crawler hits spread over the last 30 days and the three brands, 2,000 records a delivery.
    await seedDeliveries(seed, (d, count, at) =>
      drainTo(server.base, sites[d % sites.length]!, mix === "heavy" ? heavy(`s${n}x${d}`, count, count, at) : drainBody(`s${n}x${d}`, count, 0, at, cubePage)))
    for (let i = 0; i < 300; i++) {
      if (await fetch(`${bare}/api/public/v1/brands`, { headers: auth }).then((r) => r.ok, () => false)) break
      await Bun.sleep(100)
    }

    let serial = 0
    const request = (kind: number, i: number): Promise<Response> => {
      const site = sites[i % sites.length]!
      const brand = `${server.base}/api/public/v1/brands/${site.slug}`
      switch (kind) {
        case 0:
          return fetch(`${server.base}/api/public/v1/brands`, { headers: auth })
        case 1:
          return fetch(brand, { headers: auth })
        case 2:
          return fetch(`${brand}/agents?range=30d`, { headers: auth })
        case 3:
          return fetch(`${brand}/agents/pages?range=30d&limit=50`, { headers: auth })
        default:
          return drainTo(server.base, site, body20(`r${n}x${serial++}`))
      }
    }
    const costRequest = (cost: number, i: number): Promise<Response> => {
      switch (cost) {
        case 0:
          return request(2, i)
        case 1:
          return request(3, i)
        case 2:
          return fetch(`${bare}/api/public/v1/brands`, { headers: auth })
        case 3:
          return request(4, i)
        default:
          return drainTo(bare, sites[i % sites.length]!, body20(`b${n}x${serial++}`))
      }
    }
    const cpu = async () => ({
      server: (await treeCpuMs(server.proc.pid)) + (baseline === undefined ? 0 : await treeCpuMs(baseline.pid)),
      pg: await backendCpu(observer, dbName)
    })
    // Each request's cost alone is measured from a steady state: the seed's and the open loop's hits
    // folded first (folding a backlog of tens of thousands of hits while measuring would count it
    // against whichever request came next). A delivery's own hits are folded within its measurement.
    const measure = async (cost: number): Promise<Cost> => {
      await queueFolded(local)
      await openLoop(costRate, costSeconds / 2, (i) => ({ kind: 0, response: costRequest(cost, i) }))
      const before = await cpu()
      const result = await openLoop(costRate, costSeconds, (i) => ({ kind: 0, response: costRequest(cost, i) }))
      const after = await cpu()
      const errors = result.answered - result.ok + result.unsent
      const why = JSON.stringify(Object.fromEntries(result.errors))
      return { server: (after.server - before.server) / result.ok, pg: backendCpuDeltaMs(before.pg, after.pg) / result.ok, errors, why }
    }

    const costs: Array<Cost> = []
    for (const cost of [0, 1, 2]) costs[cost] = await measure(cost)
    loadAvg.push(await loadAverage())

    // The open loop; crawler hits counted before and after through the API (what a customer reads).
    const hitsNow = async () => {
      let total = 0
      for (const site of sites) {
        const r = await fetch(`${server.base}/api/public/v1/brands/${site.slug}/agents?range=7d`, { headers: auth })
        total += ((await r.json()) as { kpis: { hits: number } }).kpis.hits
      }
      return total
    }
    const before = await hitsNow()
    let accepted = 0
    let sentDeliveries = 0
    let okDeliveries = 0
    let wrongAccepted = 0
    const cpu0 = await cpu()
    const wait0 = await treeRunDelayMs(server.proc.pid)
    const t0 = performance.now()
    const load = await openLoop(rate, seconds, (i) => {
      const kind = i % 5
      if (kind === 4) sentDeliveries++
      return {
        kind,
        response: request(kind, i),
        check: async (r) => {
          if (kind !== 4) {
            await r.arrayBuffer()
            return r.status === 200 ? null : `status ${r.status}`
          }
          const text = await r.text()
          if (r.status !== 200) return `status ${r.status}`
          const got = (JSON.parse(text) as { accepted: number }).accepted
          accepted += got
          okDeliveries++
          if (got !== hitsPer20) wrongAccepted++
          return null
        }
      }
    }, maxInFlight)
    const wallMs = performance.now() - t0
    const cpu1 = await cpu()
    const wait1 = await treeRunDelayMs(server.proc.pid)
    // Deliveries answered after the grace are still stored and acknowledged: count once all have settled.
    const unsettled = await Promise.race([load.settled.then(() => false), Bun.sleep(180_000).then(() => true)])
    const stored = (await hitsNow()) - before
    const acknowledged = { accepted, okDeliveries, wrongAccepted }
    loadAvg.push(await loadAverage())
    const rssMiB = await peakRssMiB(server.proc.pid)
    const verification = ((await (await fetch(`${server.base}/api/public/v1/brands/${sites[0]!.slug}/agents?range=7d`, { headers: auth })).json()) as {
      breakdowns?: { by_verification?: Array<{ verification: string; hits: number }> }
    }).breakdowns?.by_verification?.map((v) => `${v.verification} ${v.hits}`).join(", ") ?? "?"

    costs[3] = await measure(3)
    costs[4] = await measure(4)
    loadAvg.push(await loadAverage())
    return {
      costs,
      load,
      serverCpuPct: ((cpu1.server - cpu0.server) / wallMs) * 100,
      serverWaitPct: ((wait1 - wait0) / wallMs) * 100,
      pgCpuPct: (backendCpuDeltaMs(cpu0.pg, cpu1.pg) / wallMs) * 100,
      sentHits: sentDeliveries * hitsPer20,
      answeredHits: acknowledged.okDeliveries * hitsPer20,
      wrongAccepted: acknowledged.wrongAccepted,
      accepted: acknowledged.accepted,
      unsettled,
      stored,
      rssMiB,
      loadAvg,
      verification
    }
  } finally {
    baseline?.kill()
    await baseline?.exited
    await observer.end()
    await local.end()
    await server.stop()
    if (process.env.KEEP_DB !== "1") await db.drop()
    else console.log(`kept database ${db.url}`)
  }
}

const sites0 = "brand-0's hits of the last 7 days by verdict:"
const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "-")
const summaries: Array<string> = []
for (const mix of mixes()) {
  const results: Array<RoundResult> = []
  for (let n = 0; n < rounds; n++) {
    // A round that fails (the server resets the read that counts the hits, say) is reported and skipped.
    const r = await round(mix, n).catch((error: unknown) => {
      console.log(`[${mix}] round ${n + 1}/${rounds} FAILED: ${String(error instanceof Error ? error.message : error).slice(0, 200)}`)
      process.exitCode = 1
      return null
    })
    if (r === null) continue
    results.push(r)
    const sorted = Float64Array.from(r.load.latencies).sort()
    const errs = [...r.load.errors.values()].reduce((a, b) => a + b, 0)
    console.log(`[${mix}] round ${n + 1}/${rounds} (load average ${r.loadAvg.join(" -> ")})`)
    for (let c = 0; c < COSTS.length; c++) {
      const x = r.costs[c]!
      console.log(`  alone at ${costRate}/s  ${COSTS[c]!.padEnd(34)} ${f(x.server)} ms server + ${f(x.pg)} ms PostgreSQL CPU = ${f(x.server + x.pg)} ms${x.errors > 0 ? `; ${x.errors} errors or unsent ${x.why}` : ""}`)
    }
    console.log(
      `  open loop ${rate}/s x ${seconds} s: sent ${r.load.sent} of ${r.load.due} (unsent ${r.load.unsent}), ${r.load.ok} ok, ${errs} errors` +
        (errs > 0 ? ` ${JSON.stringify(Object.fromEntries(r.load.errors))}` : "") +
        `; achieved ${f(r.load.ok / r.load.elapsed, 0)} req/s; p50 ${f(percentile(sorted, 0.5), 1)} ms, p99 ${f(percentile(sorted, 0.99), 1)} ms, max ${f(sorted[sorted.length - 1] ?? NaN, 1)} ms`
    )
    for (let k = 0; k < KINDS.length; k++) {
      const mine = Float64Array.from(r.load.latencies.filter((_, i) => r.load.kinds[i] === k)).sort()
      console.log(`    ${KINDS[k]!.padEnd(34)} n ${mine.length}, p50 ${f(percentile(mine, 0.5), 1)}, p99 ${f(percentile(mine, 0.99), 1)}`)
    }
    console.log(
      `  crawler hits: ${r.sentHits} sent, ${r.answeredHits} in deliveries answered 200 (their accepted summed to ${r.accepted}; ${r.wrongAccepted} answers with accepted other than ${mix === "heavy" ? 18 : 5}), ` +
        `${r.stored} more counted by /agents (lost ${Math.max(0, r.answeredHits - r.stored)}; counted beyond those answered ${Math.max(0, r.stored - r.answeredHits)}, from deliveries reset); ` +
        `${r.unsettled ? "COUNTED WITH REQUESTS STILL OPEN; " : ""}` +
        `server ${f(r.serverCpuPct, 0)}% (and ${f(r.serverWaitPct, 0)}% waiting for a CPU) + PostgreSQL ${f(r.pgCpuPct, 0)}% of a core; server peak RSS ${f(r.rssMiB, 0)} MiB; ${sites0} ${r.verification}`
    )
  }
  if (results.length === 0) continue
  const m = (g: (r: RoundResult) => number) => median(results.map(g))
  const cost = (c: number) => `${f(m((r) => r.costs[c]!.server))} + ${f(m((r) => r.costs[c]!.pg))} = ${f(m((r) => r.costs[c]!.server + r.costs[c]!.pg))} ms`
  const p = (q: number) => m((r) => percentile(Float64Array.from(r.load.latencies).sort(), q))
  summaries.push(
    `${mix} mix, ${results.length} of ${rounds} rounds, medians (server + PostgreSQL CPU per request; each alone at ${costRate}/s, ${seed} hits seeded):`,
    `| what | baseline | ours | ratio | goal |`,
    `| --- | --- | --- | --- | --- |`,
    `| 20-record delivery (${mix === "heavy" ? "18" : "5"} crawler hits) alone | ${cost(4)} | ${cost(3)} | ${f(m((r) => (r.costs[3]!.server + r.costs[3]!.pg) / (r.costs[4]!.server + r.costs[4]!.pg)))} | <= 1.5 ms |`,
    `| /agents?range=30d alone | floor ${cost(2)} | ${cost(0)} | ${f(m((r) => (r.costs[0]!.server + r.costs[0]!.pg) / (r.costs[2]!.server + r.costs[2]!.pg)))} | <= 1.5 ms |`,
    `| /agents/pages?range=30d&limit=50 alone | floor ${cost(2)} | ${cost(1)} | ${f(m((r) => (r.costs[1]!.server + r.costs[1]!.pg) / (r.costs[2]!.server + r.costs[2]!.pg)))} | <= 1.5 ms |`,
    `| open loop ${rate}/s x ${seconds} s | | achieved ${f(m((r) => r.load.ok / r.load.elapsed), 0)} req/s, unsent ${m((r) => r.load.unsent)}, errors ${m((r) => r.load.answered - r.load.ok + (r.load.sent - r.load.answered))}, p50 ${f(p(0.5), 1)} ms, p99 ${f(p(0.99), 1)} ms, lost ${m((r) => Math.max(0, r.answeredHits - r.stored))}, wrong accepted ${m((r) => r.wrongAccepted)}; server ${f(m((r) => r.serverCpuPct), 0)}% (${f(m((r) => r.serverWaitPct), 0)}% waiting for a CPU) + PostgreSQL ${f(m((r) => r.pgCpuPct), 0)}% of a core | | ${rate} achieved, 0 errors, p99 < 250 ms |`,
    `load average (1, 5, 15 min) per round, at start / after the reads / after the load / at the end: ${results.map((r) => r.loadAvg.join(" -> ")).join("; ")}`,
    ""
  )
}
console.log("")
for (const line of summaries) console.log(line)
// Timers of the bounded waits (the grace, the settle) would keep the process alive for minutes.
process.exit(process.exitCode ?? 0)
