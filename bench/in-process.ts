/**
 * What one request costs the server and PostgreSQL with no HTTP in between (docs/performance.md): the
 * whole application in this process (bench/support.ts inProcessApp), its handler called in a loop.
 *
 *   bun run bench/in-process.ts
 *
 * PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL); a fresh database, dropped after (KEEP_DB=1 keeps
 * it). A server process seeds it as bench/load.ts does (3 brands, SEED (50,000) heavy-mix crawler hits
 * over the last 30 days, 2,000 records a delivery) and stops once the aggregator has folded them. Then,
 * for each of ONLY (drain,agents,pages): 300 unmeasured requests, then ROUNDS (3) measurements of N
 * (2,000) requests, CONCURRENCY (1) in flight. A drain request is a 20-record heavy-mix delivery (18
 * crawler hits) with its Content-Length, as senders send it; the bodies are made before the clock
 * starts. Per request: this process's CPU (the application, the aggregator's schedule included), and
 * PostgreSQL's CPU (the database's client backends, from /proc), with each backend's share next to its
 * last statement: which statements the time went to.
 */
import postgres from "postgres"
import {
  backendCpu,
  backendCpuDeltaMs,
  freshDatabase,
  inProcessApp,
  seedHeavyBrands,
  startServer
} from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const seed = Number(process.env.SEED ?? 50_000)
const n = Number(process.env.N ?? 2_000)
const rounds = Number(process.env.ROUNDS ?? 3)
const concurrency = Math.max(1, Number(process.env.CONCURRENCY ?? 1))
const only = (process.env.ONLY ?? "drain,agents,pages").split(",")

const db = await freshDatabase(adminUrl, "aiv_inproc")
const dbName = new URL(db.url).pathname.slice(1)
const observer = postgres(adminUrl, { max: 1, onnotice: () => {} })
try {
  const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18451)
  const { auth, sites, heavy } = await seedHeavyBrands(server.base, db.url, seed)
  await server.stop()

  const app = await inProcessApp(db.url)
  /** The start of the last statement of each of the database's client backends. */
  const statements = async () =>
    new Map((await observer<Array<{ pid: number; statement: string }>>`
      select pid, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 60) as statement from pg_stat_activity
      where datname = ${dbName} and backend_type = 'client backend'`).map((row) => [row.pid, row.statement.trim()]))
  const requests: Record<string, (i: number) => () => Promise<Response>> = {
    drain: (i) => {
      const body = heavy(`d${i}`, 20, 18)
      const site = sites[i % sites.length]!
      const headers = { ...auth, "content-length": String(Buffer.byteLength(body)) }
      return () => app.call(`/api/public/v1/agents/ingest/drain?site_id=${site.siteId}`, { method: "POST", headers, body })
    },
    agents: (i) => () => app.call(`/api/public/v1/brands/${sites[i % sites.length]!.slug}/agents?range=30d`, { headers: auth }),
    pages: (i) => () => app.call(`/api/public/v1/brands/${sites[i % sites.length]!.slug}/agents/pages?range=30d&limit=50`, { headers: auth })
  }
  let serial = 0
  const run = async (name: string, count: number) => {
    const make = requests[name]!
    const calls = Array.from({ length: count }, () => make(serial++))
    let next = 0
    let failed = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < calls.length) {
        const response = await calls[next++]!()
        await response.arrayBuffer()
        if (response.status !== 200) failed++
      }
    }))
    if (failed > 0) throw new Error(`${name}: ${failed} answers not 200`)
  }
  for (const name of only) {
    if (requests[name] === undefined) throw new Error(`ONLY: unknown request ${name}`)
    await run(name, 300)
    for (let round = 1; round <= rounds; round++) {
      const before = await backendCpu(observer, dbName)
      const cpu = process.cpuUsage()
      const started = performance.now()
      await run(name, n)
      const used = process.cpuUsage(cpu)
      const wall = performance.now() - started
      const after = await backendCpu(observer, dbName)
      const pg = backendCpuDeltaMs(before, after)
      const last = await statements()
      const shares: Array<string> = []
      for (const [pid, ms] of after) {
        const delta = ms - (before.get(pid) ?? 0)
        if (delta > 0) shares.push(`      ${(delta / n).toFixed(3)} ms  ${last.get(pid) ?? ""}`)
      }
      console.log(
        `${name} round ${round}: server ${((used.user + used.system) / 1000 / n).toFixed(3)} ms + PostgreSQL ${(pg / n).toFixed(3)} ms CPU a request` +
          ` (${(wall / n).toFixed(3)} ms of wall time a request, ${concurrency} in flight)\n${shares.join("\n")}`
      )
    }
  }
  await app.dispose()
} finally {
  await observer.end()
  if (process.env.KEEP_DB !== "1") await db.drop()
  else console.log(`kept ${db.url}`)
}
process.exit(0)
