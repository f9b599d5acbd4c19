/**
 * Requests per second and CPU per request of authenticated GET /api/public/v1/brands on
 * PostgreSQL, side by side with the strongest simple server doing the same logical work, in the
 * same run (docs/performance.md).
 *
 *   bun run bench/brands-rps.ts            (needs wrk, taskset and PostgreSQL at 127.0.0.1:5432)
 *   BRANDS=1|3|10|100 ROUNDS=3 SECONDS=8 bun run bench/brands-rps.ts
 *
 * - Ours: src/app/main.ts as deployed (the edge with its precomputed GET /brands, HttpApi behind it,
 *   the account's brands in memory, @effect/sql-pg), rate limiters on but far above the
 *   load, request log on (to /dev/null).
 * - Baseline (bench/baseline-brands-server.ts): Bun.serve + postgres.js, pool 10, `max_pipeline` 5
 *   (about connections / pool; the default of 100 makes postgres.js slower round after round under
 *   sustained load), the key looked up by its SHA-256, then the brands: two prepared queries.
 * - Both servers on core 0, wrk (-t1 -c50) on core 1, and the PostgreSQL backends of the bench
 *   database pinned to core 1 too (PIN_POSTGRES=0 leaves them where the OS puts them).
 * - Rounds alternate ours / baseline (ROUNDS, at least 3 for a median), medians reported.
 * - Server CPU per request: utime + stime of the server process tree (/proc/<pid>/stat) over the
 *   round, divided by the requests wrk counted. PostgreSQL CPU per request: the same for the
 *   client backends of the bench database (/proc of each backend; pg_stat_statements is not
 *   preloaded on the servers this runs on).
 * - The ratio (ours / baseline, median req/s) is the last line.
 *
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres); a fresh
 * database is created for the run and dropped after.
 */
import { spawn, spawnSync } from "bun"
import postgres from "postgres"
import { backendCpu, backendCpuDeltaMs, freshDatabase, loadAverage, pinBackends, seedAccount, startScriptEnv, treeCpuMs } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const rounds = Number(process.env.ROUNDS ?? 3)
const seconds = Number(process.env.SECONDS ?? 8)
const brandCount = Number(process.env.BRANDS ?? 3)
const connections = Number(process.env.CONNECTIONS ?? 50)
const pinPostgres = process.env.PIN_POSTGRES !== "0"
if (!(brandCount >= 1 && brandCount <= 100)) throw new Error("BRANDS is 1 to 100 (the enterprise plan's cap)")

const has = (cmd: string) => spawnSync(["sh", "-c", `command -v ${cmd}`]).exitCode === 0
if (!has("wrk")) throw new Error("wrk is missing: apt-get install -y wrk")
const pin = (core: number, argv: Array<string>) => (has("taskset") ? ["taskset", "-c", String(core), ...argv] : argv)

const database = await freshDatabase(adminUrl, "aiv_bench_brands")
const databaseUrl = database.url
const dbName = new URL(databaseUrl).pathname.slice(1)
const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} })

const waitFor = async (target: string, ok = (_status: number) => true) => {
  for (let i = 0; i < 300; i++) {
    try {
      // Bun listens before the app is installed (404 until then): wait for a real answer.
      if (ok((await fetch(target)).status)) return
      await Bun.sleep(100)
    } catch {
      await Bun.sleep(100)
    }
  }
  throw new Error(`${target} did not come up`)
}

const ours = spawn(pin(0, ["bun", "run", "src/app/main.ts"]), {
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: "18181",
    HOST: "127.0.0.1",
    RATE_LIMIT_API_KEY: "1000000000/1",
    RATE_LIMIT_API_IP: "1000000000/1",
    RATE_LIMIT_AUTH_IP: "1000/1",
    ...startScriptEnv(),
    // e.g. SERVER_BUN_OPTIONS="--cpu-prof-md --cpu-prof-dir=/tmp/prof" profiles our server alone.
    ...(process.env.SERVER_BUN_OPTIONS ? { BUN_OPTIONS: process.env.SERVER_BUN_OPTIONS } : {})
  },
  stdout: "ignore",
  stderr: "inherit"
})
let baseline: ReturnType<typeof spawn> | undefined
// Whatever happens next, the servers do not outlive the bench.
process.on("exit", () => {
  ours.kill()
  baseline?.kill()
})
await waitFor("http://127.0.0.1:18181/healthz", (status) => status === 200)
if (ours.exitCode !== null) throw new Error("our server exited (is port 18181 taken?)")

// Seed through the real API: an account with BRANDS brands and a key.
const base = "http://127.0.0.1:18181"
const { key } = await seedAccount(base, databaseUrl, brandCount)

baseline = spawn(pin(0, ["bun", "run", "bench/baseline-brands-server.ts"]), {
  env: { ...process.env, ...startScriptEnv(), DATABASE_URL: databaseUrl, PORT: "18182", POOL: "10", MAX_PIPELINE: process.env.MAX_PIPELINE ?? "5" },
  stdout: "ignore",
  stderr: "inherit"
})
await waitFor("http://127.0.0.1:18182/")

// Same body from both: the comparison is fair only if the work is.
const a = await (await fetch(`${base}/api/public/v1/brands`, { headers: { authorization: `Bearer ${key}` } })).json()
const b = await (await fetch("http://127.0.0.1:18182/api/public/v1/brands", { headers: { authorization: `Bearer ${key}` } })).json()
if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`bodies differ:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`)
if ((a as { count: number }).count !== brandCount) throw new Error(`expected ${brandCount} brands, got ${JSON.stringify(a)}`)

interface Round {
  readonly rps: number
  readonly serverUs: number
  readonly postgresUs: number
}
const wrk = async (port: number, pid: number, duration = seconds): Promise<Round> => {
  if (pinPostgres) await pinBackends(monitor, dbName, 1)
  const cpu0 = await treeCpuMs(pid)
  const pg0 = await backendCpu(monitor, dbName)
  const out = spawnSync(
    pin(1, ["wrk", "-t1", `-c${connections}`, `-d${duration}s`, "-H", `Authorization: Bearer ${key}`, `http://127.0.0.1:${port}/api/public/v1/brands`])
  )
  const cpu1 = await treeCpuMs(pid)
  const pg1 = await backendCpu(monitor, dbName)
  const text = out.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN)
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN)
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0)
  if (non2xx > 0 || !(requests > 0)) throw new Error(`non-2xx responses or no requests on port ${port}:\n${text}${out.stderr.toString()}`)
  return { rps, serverUs: ((cpu1 - cpu0) * 1000) / requests, postgresUs: (backendCpuDeltaMs(pg0, pg1) * 1000) / requests }
}
const median = (xs: Array<number>) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!

console.log(`load average before: ${await loadAverage()}`)
// Warm-up (JIT, pools filled, prepared statements): short, not counted.
await wrk(18181, ours.pid, Math.min(2, seconds))
await wrk(18182, baseline.pid, Math.min(2, seconds))
const oursRounds: Array<Round> = []
const baseRounds: Array<Round> = []
const show = (r: Round) => `${r.rps.toFixed(0)} req/s, ${r.serverUs.toFixed(0)} µs server + ${r.postgresUs.toFixed(0)} µs PostgreSQL CPU/req`
for (let round = 0; round < rounds; round++) {
  oursRounds.push(await wrk(18181, ours.pid))
  baseRounds.push(await wrk(18182, baseline.pid))
  console.log(`round ${round + 1}: ours ${show(oursRounds.at(-1)!)}; baseline ${show(baseRounds.at(-1)!)}`)
}
console.log(`load average after: ${await loadAverage()}`)
ours.kill()
baseline.kill()
await Promise.all([ours.exited, baseline.exited])
baseline = undefined
await monitor.end()
await database.drop()

const med = (rs: Array<Round>): Round => ({
  rps: median(rs.map((r) => r.rps)),
  serverUs: median(rs.map((r) => r.serverUs)),
  postgresUs: median(rs.map((r) => r.postgresUs))
})
const o = med(oursRounds)
const bl = med(baseRounds)
console.log(`GET /api/public/v1/brands (${brandCount} brands), PostgreSQL, wrk -c${connections} ${seconds}s x ${rounds} alternating rounds, medians`)
console.log(`  ours (src/app/main.ts as deployed: the edge, its precomputed route, the brands in memory): ${show(o)}`)
console.log(`  baseline (Bun.serve + postgres.js, pool 10, max_pipeline ${process.env.MAX_PIPELINE ?? "5"}, 2 prepared queries): ${show(bl)}`)
console.log(`ratio: ${(o.rps / bl.rps).toFixed(2)} (goal >= 0.5)`)
