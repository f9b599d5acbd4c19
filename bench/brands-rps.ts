/**
 * Requests per second of authenticated GET /api/public/v1/brands on PostgreSQL, side by side
 * with a minimal Bun.serve + postgres.js server doing the same logical work, in the same run.
 *
 *   bun run bench/brands-rps.ts            (needs wrk and PostgreSQL at 127.0.0.1:5432)
 *
 * Server on core 0, wrk on core 1 (taskset), 50 connections, alternating rounds, medians.
 * BENCH_DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/postgres);
 * a fresh database is created for the run and dropped after.
 */
import { spawn, spawnSync } from "bun"
import postgres from "postgres"
import { seedAccount } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const rounds = Number(process.env.ROUNDS ?? 3)
const seconds = Number(process.env.SECONDS ?? 8)
const dbName = `aiv_bench_${Date.now().toString(36)}`
const admin = postgres(adminUrl, { max: 1 })
await admin.unsafe(`create database ${dbName}`)
const url = new URL(adminUrl)
url.pathname = `/${dbName}`
const databaseUrl = url.toString()

const has = (cmd: string) => spawnSync(["sh", "-c", `command -v ${cmd}`]).exitCode === 0
if (!has("wrk")) throw new Error("wrk is missing: apt-get install wrk")
const pin = (core: number, argv: Array<string>) => (has("taskset") ? ["taskset", "-c", String(core), ...argv] : argv)

const waitFor = async (target: string, ok = (_status: number) => true) => {
  for (let i = 0; i < 200; i++) {
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

const ours = spawn(pin(0, ["bun", "run", "src/main.ts"]), {
  // Rate limits on (the limiter runs on every request) but far above what wrk can send; request log on.
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: "18181",
    HOST: "127.0.0.1",
    RATE_LIMIT_API_KEY: "1000000000/1",
    RATE_LIMIT_API_IP: "1000000000/1",
    RATE_LIMIT_AUTH_IP: "1000/1"
  },
  stdout: "ignore",
  stderr: "inherit"
})
// Whatever happens next, the servers do not outlive the bench.
process.on("exit", () => {
  ours.kill()
  baseline?.kill()
})
let baseline: ReturnType<typeof spawn> | undefined
await waitFor("http://127.0.0.1:18181/healthz", (status) => status === 200)
if (ours.exitCode !== null) throw new Error("our server exited (is port 18181 taken?)")

// Seed through the real API: an account with 5 brands and a key.
const base = "http://127.0.0.1:18181"
const { key } = await seedAccount(base, databaseUrl, ["alpha", "bravo", "charlie", "delta", "echo"])

baseline = spawn(pin(0, ["bun", "run", "bench/baseline-brands-server.ts"]), {
  env: { ...process.env, DATABASE_URL: databaseUrl, PORT: "18182" },
  stdout: "ignore",
  stderr: "inherit"
})
await waitFor("http://127.0.0.1:18182/")

// Same body from both: the comparison is fair only if the work is.
const a = await (await fetch(`${base}/api/public/v1/brands`, { headers: { authorization: `Bearer ${key}` } })).json()
const b = await (await fetch("http://127.0.0.1:18182/api/public/v1/brands", { headers: { authorization: `Bearer ${key}` } })).json()
if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`bodies differ:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`)

const wrk = (port: number) => {
  const out = spawnSync(
    pin(1, ["wrk", "-t1", "-c50", `-d${seconds}s`, "-H", `Authorization: Bearer ${key}`, `http://127.0.0.1:${port}/api/public/v1/brands`])
  )
  const text = out.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN)
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0)
  if (non2xx > 0) throw new Error(`non-2xx responses on port ${port}:\n${text}`)
  return rps
}
const median = (xs: Array<number>) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!

wrk(18181)
wrk(18182) // warm-up
const oursRps: Array<number> = []
const baseRps: Array<number> = []
for (let round = 0; round < rounds; round++) {
  oursRps.push(wrk(18181))
  baseRps.push(wrk(18182))
  console.log(`round ${round + 1}: ours ${oursRps.at(-1)!.toFixed(0)} req/s, baseline ${baseRps.at(-1)!.toFixed(0)} req/s`)
}
ours.kill()
baseline.kill()
await Promise.all([ours.exited, baseline.exited])
baseline = undefined
await admin.unsafe(`drop database ${dbName} with (force)`)
await admin.end()

const o = median(oursRps)
const bl = median(baseRps)
console.log(`GET /api/public/v1/brands (5 brands), PostgreSQL, ${seconds}s x ${rounds} rounds, 50 connections`)
console.log(`  ours (HttpApi + @effect/sql-pg, cached key): ${o.toFixed(0)} req/s`)
console.log(`  baseline (Bun.serve + postgres.js, 2 queries): ${bl.toFixed(0)} req/s`)
console.log(`  ratio: ${(o / bl).toFixed(2)} (target >= 0.5)`)
