/**
 * Load: 60 s at 1,000 requests a second, open loop (requests start on schedule whether
 * or not earlier ones finished), mixed over read endpoints and drain deliveries, against one
 * server process on PostgreSQL. Expect 0 errors; prints p50/p99/max latency and the server's peak RSS.
 *
 *   bun run bench/load.ts      (PostgreSQL at 127.0.0.1:5432 or BENCH_DATABASE_URL; fresh database, dropped after)
 *
 * SECONDS (60) and RATE (1000) bound it. Mix: 80% reads (40% brand list, 30% one brand, 5% crawled
 * pages, 5% agent dashboard), 20% drain deliveries of 20 records (5 crawler hits on a site's 2,000 pages).
 */
import { drainBody, freshDatabase, loadAverage, peakRssMiB, percentile, seedAccount, startServer } from "./support.js"

const seconds = Math.min(300, Number(process.env.SECONDS ?? 60))
const rate = Math.min(5000, Number(process.env.RATE ?? 1000))
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const db = await freshDatabase(adminUrl, "aiv_load")
const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18431)
try {
  const { key, sites } = await seedAccount(server.base, db.url, 3)
  const auth = { authorization: `Bearer ${key}` }
  // Per 20 requests: 8 brand lists, 6 single brands, 1 crawled-pages list, 1 agent dashboard, 4 drain deliveries.
  const reads = [
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-0",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-1",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-2",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-0/agents/pages?limit=50",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-1",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-2",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-0",
    "/api/public/v1/brands",
    "/api/public/v1/brands/brand-1/agents"
  ]
  // Warm-up: each read once (and make sure they answer 200).
  for (const path of reads) {
    const r = await fetch(server.base + path, { headers: auth })
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  }
  // A site has a finite set of pages, crawled unevenly: 2,000 paths, a few of them far more often
  // (unique paths per hit would make the page listings sort a set growing by 1,000 paths a second).
  let draw = 0
  const sitePage = () => {
    draw = (draw * 1103515245 + 12345) % 2147483648
    const u = draw / 2147483648
    return `/docs/page-${Math.floor(2000 * u * u * u)}`
  }
  const total = seconds * rate
  const latencies = new Float64Array(total)
  const kinds = new Array<string>(total)
  const errors = new Map<string, number>()
  let done = 0
  let drains = 0
  const start = performance.now()
  const one = async (i: number) => {
    const t0 = performance.now()
    let outcome = "ok"
    try {
      let response: Response
      if (i % 5 === 4) {
        const site = sites[i % sites.length]!
        drains++
        response = await fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, {
          method: "POST",
          headers: auth,
          body: drainBody(`l${i}`, 5, 15, Date.now(), sitePage)
        })
      } else {
        response = await fetch(server.base + reads[(i - Math.floor(i / 5)) % reads.length]!, { headers: auth })
      }
      await response.arrayBuffer()
      if (response.status !== 200) outcome = `status ${response.status}`
    } catch (error) {
      outcome = `network: ${String((error as Error).message).slice(0, 60)}`
    }
    latencies[i] = performance.now() - t0
    kinds[i] = i % 5 === 4 ? "drain" : reads[(i - Math.floor(i / 5)) % reads.length]!.split("?")[0]!.replace(/brand-\d/, "{slug}")
    if (outcome !== "ok") errors.set(outcome, (errors.get(outcome) ?? 0) + 1)
    done++
  }
  const inflight: Array<Promise<void>> = []
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 1) await Bun.sleep(wait)
    inflight.push(one(i))
    if (inflight.length > 5000) await Promise.all(inflight.splice(0, 2500))
  }
  await Promise.all(inflight)
  const elapsed = (performance.now() - start) / 1000
  const sorted = Float64Array.from(latencies).sort()
  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0)
  console.log(`load: ${done} requests in ${elapsed.toFixed(1)} s (${(done / elapsed).toFixed(0)} req/s offered ${rate}/s), ${drains} drain deliveries`)
  console.log(`  errors: ${errorCount}${errorCount > 0 ? " " + JSON.stringify(Object.fromEntries(errors)) : ""}`)
  console.log(`  latency ms: p50 ${percentile(sorted, 0.5).toFixed(1)}, p90 ${percentile(sorted, 0.9).toFixed(1)}, p99 ${percentile(sorted, 0.99).toFixed(1)}, max ${sorted[sorted.length - 1]!.toFixed(1)}`)
  const byKind = new Map<string, Array<number>>()
  for (let i = 0; i < total; i++) (byKind.get(kinds[i]!) ?? byKind.set(kinds[i]!, []).get(kinds[i]!)!).push(latencies[i]!)
  for (const [kind, xs] of byKind) {
    xs.sort((x, y) => x - y)
    console.log(`    ${kind}: n ${xs.length}, p50 ${percentile(xs, 0.5).toFixed(1)}, p99 ${percentile(xs, 0.99).toFixed(1)}`)
  }
  console.log(`  server peak RSS: ${(await peakRssMiB(server.proc.pid)).toFixed(0)} MiB; load average ${await loadAverage()}`)
  if (errorCount > 0) process.exitCode = 1
} finally {
  await server.stop()
  await db.drop()
}
