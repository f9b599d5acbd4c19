/**
 * One account's stored-hit cost (docs/performance.md): drain deliveries of RECORDS (500) GPTBot
 * records, every one a stored hit, all to one brand, paths from a fixed set of PATHS (400), so
 * every delivery updates the same rollup and span rows; CONCURRENCY (4) in flight. Against the
 * server of each tree of TREES (comma-separated checkouts, default this one), each on a fresh
 * database of its own, in alternating rounds (ROUNDS, default 3) of DELIVERIES (40) deliveries;
 * prints records/s per round and the medians, with the load average. Each server runs pinned to
 * core 0 when taskset is present. A read of the pages list comes first (it makes the brand's spans,
 * which deliveries then update, as in bench/growth.ts).
 *
 *   bun run bench/hot-account.ts
 *   TREES=../before,. bun run bench/hot-account.ts      (A/B against another checkout, e.g. a git worktree: alternating rounds)
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): where the databases
 * are made (and dropped after). SERVER_BUN_OPTIONS is passed to the servers as BUN_OPTIONS (a CPU
 * profile: "--cpu-prof-md --cpu-prof-dir=/tmp/prof"); LOG_STATEMENTS=1 logs every statement of the
 * servers' databases with its duration (log_min_duration_statement = 0), and with EXPLAIN=1 the plans of those over
 * 5 ms (auto_explain: actual times, buffers, trigger times).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import postgres from "postgres"
import { drainBody, freshDatabase, loadAverage, seedAccount, startServer, treeCpuMs } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const TREES = (process.env.TREES ?? ".").split(",").map((t) => resolve(t))
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const DELIVERIES = Number(process.env.DELIVERIES ?? 40)
const RECORDS = Number(process.env.RECORDS ?? 500)
const PATHS = Number(process.env.PATHS ?? 400)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4)
const PORT = Number(process.env.PORT ?? 40622)

const startTree = async (tree: string, port: number) => {
  const db = await freshDatabase(adminUrl, "aiv_bench_hot")
  if (process.env.LOG_STATEMENTS === "1") {
    // Every statement and its duration in the PostgreSQL log (new connections take it).
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
    const name = new URL(db.url).pathname.slice(1)
    await admin.unsafe(`alter database ${name} set log_min_duration_statement = 0`)
    if (process.env.EXPLAIN === "1") {
      // The plans of statements over 5 ms, with actual times, buffers and trigger (foreign key) times.
      for (const setting of ["session_preload_libraries = 'auto_explain'", "auto_explain.log_min_duration = 5", "auto_explain.log_analyze = on", "auto_explain.log_buffers = on", "auto_explain.log_triggers = on"]) {
        await admin.unsafe(`alter database ${name} set ${setting}`)
      }
    }
    await admin.end()
  }
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-bench-hot-"))
  const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: dataDir }, port, 0, tree)
  const { base, proc } = server
  const { key, sites } = await seedAccount(base, db.url, ["hot"])
  // A read first, as in bench/growth.ts: it makes the brand's 7/30/90-day spans, which every
  // delivery then keeps up to date.
  const read = await fetch(`${base}/api/public/v1/brands/hot/agents/pages?range=90d&limit=50`, { headers: { authorization: `Bearer ${key}` } })
  if (!read.ok) throw new Error(`${tree}: read ${read.status}`)
  await read.arrayBuffer()
  const url = `${base}/api/public/v1/agents/ingest/drain?site_id=${sites[0]!.siteId}`
  const headers = { authorization: `Bearer ${key}` }
  const post = async (body: string) => {
    const r = await fetch(url, { method: "POST", headers, body })
    if (!r.ok) throw new Error(`${tree}: delivery ${r.status} ${await r.text()}`)
    await r.arrayBuffer()
  }
  const stop = async () => {
    await server.stop()
    await db.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { tree, proc, post, stop }
}

const pathOf = (i: number) => `/p/${i % PATHS}`
const servers = []
for (let i = 0; i < TREES.length; i++) servers.push(await startTree(TREES[i]!, PORT + i))
try {
  // Warm-up: the statements prepared, the spans of the day made.
  for (const s of servers) for (let i = 0; i < 4; i++) await s.post(drainBody(`warm${i}`, RECORDS, 0, Date.now(), pathOf))
  const rates: Array<Array<number>> = servers.map(() => [])
  for (let round = 1; round <= ROUNDS; round++) {
    for (let t = 0; t < servers.length; t++) {
      const s = servers[t]!
      const bodies = Array.from({ length: DELIVERIES }, (_, i) => drainBody(`r${round}t${t}d${i}`, RECORDS, 0, Date.now(), pathOf))
      let next = 0
      const cpu0 = await treeCpuMs(s.proc.pid)
      const t0 = performance.now()
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < bodies.length) await s.post(bodies[next++]!)
      }))
      const seconds = (performance.now() - t0) / 1000
      const cpu = (await treeCpuMs(s.proc.pid)) - cpu0
      const rate = (DELIVERIES * RECORDS) / seconds
      rates[t]!.push(rate)
      console.log(`round ${round} ${s.tree}: ${Math.round(rate)} records/s, server CPU ${(cpu / DELIVERIES).toFixed(1)} ms/delivery, load ${await loadAverage()}`)
    }
  }
  for (let t = 0; t < servers.length; t++) {
    const sorted = [...rates[t]!].sort((a, b) => a - b)
    console.log(`median ${servers[t]!.tree}: ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} records/s (${ROUNDS} rounds of ${DELIVERIES} x ${RECORDS}, ${CONCURRENCY} in flight)`)
  }
} finally {
  for (const s of servers) await s.stop()
}
process.exit(0)
