/**
 * Mixed load, open loop: requests start on a fixed schedule whatever the latency of earlier ones.
 * RATE (1000) requests a second for SECONDS (60), 20% each of
 *   GET /brands, GET /brands/{slug}, /agents?range=30d, /agents/pages?range=30d&limit=50,
 *   and drain deliveries of 20 records (5 AI crawler hits on a site's 2,000 pages, 15 browsers),
 * against one server process on PostgreSQL with 50,000 crawler hits over the last 30 days seeded
 * first (through drain deliveries, as a customer's logs arrive). The server is pinned to core 0 and
 * this load generator to core 1 (taskset; PostgreSQL is not pinned), rate limiters off.
 *
 *   bun run bench/load.ts      (PostgreSQL at 127.0.0.1:5432 or BENCH_DATABASE_URL; fresh database, dropped after)
 *
 * Before the load, each kind of request alone: server + PostgreSQL CPU per request, from /proc,
 * over COST_REQUESTS (400) requests sent 4 at a time, after as many unmeasured. Then the load: p50/p99/max latency, per kind
 * too, errors (a status other than 200/202, or no answer), the server's peak RSS. SEED (50000) sets
 * the seeded hits; KEEP_DB=1 keeps the database.
 */
import postgres from "postgres"
import {
  backendCpu,
  backendCpuDeltaMs,
  drainBody,
  freshDatabase,
  loadAverage,
  peakRssMiB,
  percentile,
  seedAccount,
  startServer,
  treeCpuMs
} from "./support.js"

// Pin this process to core 1 (the server gets core 0), unless already restricted.
if (Bun.which("taskset") !== null && process.env.LOAD_PINNED === undefined) {
  const child = Bun.spawn(["taskset", "-c", "1", ...process.argv], { env: { ...process.env, LOAD_PINNED: "1" }, stdio: ["inherit", "inherit", "inherit"] })
  process.exit(await child.exited)
}

const seconds = Math.min(300, Number(process.env.SECONDS ?? 60))
const rate = Math.min(5000, Number(process.env.RATE ?? 1000))
const seed = Math.min(2_000_000, Number(process.env.SEED ?? 50_000))
const costRequests = Math.min(20_000, Number(process.env.COST_REQUESTS ?? 400))
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const db = await freshDatabase(adminUrl, "aiv_load")
const dbName = new URL(db.url).pathname.slice(1)
const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18431, 0)
const observer = postgres(adminUrl, { max: 1, onnotice: () => {} })
try {
  const { key, sites } = await seedAccount(server.base, db.url, 3)
  const auth = { authorization: `Bearer ${key}` }

  // A site has a finite set of pages, crawled unevenly: 2,000 paths, a few of them far more often.
  let draw = 0
  const sitePage = () => {
    draw = (draw * 1103515245 + 12345) % 2147483648
    const u = draw / 2147483648
    return `/docs/page-${Math.floor(2000 * u * u * u)}`
  }
  const drain = (site: { siteId: string }, body: string) =>
    fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, { method: "POST", headers: auth, body })

  // Seed: `seed` crawler hits spread over the last 30 days and the three brands, 2,000 records a delivery.
  const perDelivery = 2_000
  for (let d = 0; d * perDelivery < seed; d++) {
    const at = Date.now() - Math.floor(((d * 7919) % 30) * 86_400_000 + (d % 24) * 3_600_000)
    const r = await drain(sites[d % sites.length]!, drainBody(`seed${d}`, Math.min(perDelivery, seed - d * perDelivery), 0, at, sitePage))
    if (r.status !== 200 && r.status !== 202) throw new Error(`seed delivery: ${r.status} ${await r.text()}`)
  }

  const kinds = ["GET /brands", "GET /brands/{slug}", "/agents?range=30d", "/agents/pages?range=30d&limit=50", "drain (20 records)"] as const
  const request = (kind: number, i: number): Promise<Response> => {
    const site = sites[i % sites.length]!
    const brand = `/api/public/v1/brands/${site.slug}`
    switch (kind) {
      case 0:
        return fetch(`${server.base}/api/public/v1/brands`, { headers: auth })
      case 1:
        return fetch(server.base + brand, { headers: auth })
      case 2:
        return fetch(`${server.base}${brand}/agents?range=30d`, { headers: auth })
      case 3:
        return fetch(`${server.base}${brand}/agents/pages?range=30d&limit=50`, { headers: auth })
      default:
        return drain(site, drainBody(`l${i}`, 5, 15, Date.now(), sitePage))
    }
  }
  const ok = (status: number) => status === 200 || status === 202

  // Warm-up: every kind answers.
  for (let k = 0; k < kinds.length; k++) {
    const r = await request(k, k)
    if (!ok(r.status)) throw new Error(`${kinds[k]}: ${r.status} ${await r.text()}`)
    await r.arrayBuffer()
  }

  // Each kind alone: server + PostgreSQL CPU per request, after as many requests of it unmeasured
  // (the server's JIT warms up on them).
  console.log(`cost of each kind alone (${costRequests} requests after as many unmeasured, 4 in flight; ${seed} hits seeded):`)
  let serial = 1_000_000
  const send = async (k: number, count: number) => {
    let next = 0
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < count) {
        next++
        const r = await request(k, serial++)
        await r.arrayBuffer()
        if (!ok(r.status)) throw new Error(`${kinds[k]}: ${r.status}`)
      }
    }))
  }
  for (let k = 0; k < kinds.length; k++) {
    await send(k, costRequests)
    const beforeServer = await treeCpuMs(server.proc.pid)
    const beforePg = await backendCpu(observer, dbName)
    const t0 = performance.now()
    await send(k, costRequests)
    const wall = performance.now() - t0
    const serverMs = (await treeCpuMs(server.proc.pid)) - beforeServer
    const pgMs = backendCpuDeltaMs(beforePg, await backendCpu(observer, dbName))
    console.log(
      `  ${kinds[k]!.padEnd(34)} server ${(serverMs / costRequests).toFixed(2)} ms + PostgreSQL ${(pgMs / costRequests).toFixed(2)} ms CPU/request; ${(wall / costRequests).toFixed(2)} ms wall/request`
    )
  }

  const total = seconds * rate
  const latencies = new Float64Array(total).fill(Number.NaN)
  const errors = new Map<string, number>()
  let done = 0
  const start = performance.now()
  const one = async (i: number) => {
    const t0 = performance.now()
    let outcome = "ok"
    try {
      const response = await request(i % 5, i)
      await response.arrayBuffer()
      if (!ok(response.status)) outcome = `status ${response.status}`
    } catch (error) {
      outcome = `network: ${String((error as Error).message).slice(0, 60)}`
    }
    latencies[i] = performance.now() - t0
    if (outcome !== "ok") errors.set(outcome, (errors.get(outcome) ?? 0) + 1)
    done++
  }
  const inflight = new Set<Promise<void>>()
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 1) await Bun.sleep(wait)
    const p = one(i)
    inflight.add(p)
    void p.then(() => inflight.delete(p))
  }
  const scheduled = (performance.now() - start) / 1000
  // Requests still open 30 s after the last was sent count as never answered.
  const unanswered = await Promise.race([Promise.all(inflight).then(() => 0), Bun.sleep(30_000).then(() => inflight.size)])
  if (unanswered > 0) errors.set("no answer within 30 s of the end", unanswered)
  const elapsed = (performance.now() - start) / 1000
  const answered = Array.from(latencies).filter((x) => !Number.isNaN(x))
  const sorted = Float64Array.from(answered).sort()
  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0)
  console.log(`load: ${total} requests sent over ${scheduled.toFixed(1)} s (offered ${rate}/s), ${done} answered in ${elapsed.toFixed(1)} s`)
  console.log(`  errors: ${errorCount}${errorCount > 0 ? " " + JSON.stringify(Object.fromEntries(errors)) : ""}`)
  console.log(`  latency ms: p50 ${percentile(sorted, 0.5).toFixed(1)}, p90 ${percentile(sorted, 0.9).toFixed(1)}, p99 ${percentile(sorted, 0.99).toFixed(1)}, max ${sorted[sorted.length - 1]!.toFixed(1)}`)
  for (let k = 0; k < kinds.length; k++) {
    const mine = Array.from(latencies).filter((x, i) => i % 5 === k && !Number.isNaN(x)).sort((x, y) => x - y)
    console.log(`    ${kinds[k]!.padEnd(34)} n ${mine.length}, p50 ${percentile(mine, 0.5).toFixed(1)}, p99 ${percentile(mine, 0.99).toFixed(1)}`)
  }
  console.log(`  server peak RSS: ${(await peakRssMiB(server.proc.pid)).toFixed(0)} MiB; load average ${await loadAverage()}`)
  if (errorCount > 0) process.exitCode = 1
} finally {
  await observer.end()
  await server.stop()
  if (process.env.KEEP_DB !== "1") await db.drop()
  else console.log(`kept database ${db.url}`), process.exit(process.exitCode ?? 0)
}
