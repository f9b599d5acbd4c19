/**
 * What a request costs at a low and at a high rate, thread by thread (docs/performance.md, "A request's
 * cost at 200 and at 800 a second").
 *
 *   bun run bench/request-rate.ts
 *
 * PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL); a fresh database, dropped after (KEEP_DB=1 keeps
 * it). One server process (src/app/main.ts) pinned to core 0, seeded as bench/load.ts seeds it (3
 * brands, SEED (50,000) heavy-mix crawler hits over the last 30 days) and left until the aggregator has
 * folded them. Then for each of ONLY (idle,brands,agents,pages,drain) and each of RATES (200,800)
 * requests a second: 3 s unmeasured, then SECONDS (8) measured, open loop (bench/support.ts openLoop).
 * Per answered request (per request due, for `idle`, where nothing is sent): the server's CPU by thread
 * name (the main thread `bun`, JSC's compiler threads `JITWorker`, the collector's, ...; /proc of each
 * thread) and PostgreSQL's by client backend, each next to its last statement. SERVER_ENV="A=1,B=2"
 * adds settings to the server's environment (a JSC option, say: BUN_JSC_useFTLJIT=false).
 */
import postgres from "postgres"
import { readdirSync } from "node:fs"
import { backendCpu, freshDatabase, openLoop, processTree, seedHeavyBrands, startServer, statCpuMs } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const seed = Number(process.env.SEED ?? 50_000)
const rates = (process.env.RATES ?? "200,800").split(",").map(Number)
const seconds = Number(process.env.SECONDS ?? 8)
const only = (process.env.ONLY ?? "idle,brands,agents,pages,drain").split(",")
const serverEnv: Record<string, string> = Object.fromEntries(
  (process.env.SERVER_ENV ?? "").split(",").filter((kv) => kv.includes("=")).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])
)
/** CPU so far of a process tree's threads, in ms, summed by thread name (digits at the end dropped). */
const threadCpu = async (pid: number) => {
  const out = new Map<string, number>()
  for (const p of await processTree(pid)) {
    let tids: Array<string> = []
    try {
      tids = readdirSync(`/proc/${p}/task`)
    } catch {
      continue
    }
    for (const tid of tids) {
      const comm = await Bun.file(`/proc/${p}/task/${tid}/comm`).text().catch(() => "")
      if (comm === "") continue
      const name = comm.trim().replace(/[0-9]+$/, "#")
      out.set(name, (out.get(name) ?? 0) + (await statCpuMs(`/proc/${p}/task/${tid}/stat`)))
    }
  }
  return out
}

const db = await freshDatabase(adminUrl, "aiv_rate")
const dbName = new URL(db.url).pathname.slice(1)
const observer = postgres(adminUrl, { max: 1, onnotice: () => {} })
const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://", ...serverEnv }, 18461, 0)
try {
  const { auth, sites, heavy } = await seedHeavyBrands(server.base, db.url, seed)
  let serial = 0
  const requests: Record<string, (i: number) => Promise<Response>> = {
    idle: () => Promise.resolve(new Response(null)),
    brands: () => fetch(`${server.base}/api/public/v1/brands`, { headers: auth }),
    agents: (i) => fetch(`${server.base}/api/public/v1/brands/${sites[i % sites.length]!.slug}/agents?range=30d`, { headers: auth }),
    pages: (i) =>
      fetch(`${server.base}/api/public/v1/brands/${sites[i % sites.length]!.slug}/agents/pages?range=30d&limit=50`, { headers: auth }),
    drain: (i) => {
      const body = heavy(`d${serial++}`, 20, 18)
      return fetch(`${server.base}/api/public/v1/agents/ingest/drain?site_id=${sites[i % sites.length]!.siteId}`, {
        method: "POST",
        headers: { ...auth, "content-length": String(Buffer.byteLength(body)) },
        body
      })
    }
  }
  for (const name of only) {
    const request = requests[name]
    if (request === undefined) throw new Error(`ONLY: unknown request ${name}`)
    for (const rate of rates) {
      await openLoop(rate, 3, (i) => ({ kind: 0, response: request(i) }))
      const threadsBefore = await threadCpu(server.proc.pid)
      const backendsBefore = await backendCpu(observer, dbName)
      const result = await openLoop(rate, seconds, (i) => ({ kind: 0, response: request(i) }))
      const threadsAfter = await threadCpu(server.proc.pid)
      const backendsAfter = await backendCpu(observer, dbName)
      const n = name === "idle" ? rate * seconds : result.ok
      let serverMs = 0
      const threads: Array<string> = []
      for (const [thread, ms] of threadsAfter) {
        const delta = ms - (threadsBefore.get(thread) ?? 0)
        serverMs += delta
        if (delta > 0) threads.push(`${thread} ${(delta / n).toFixed(3)}`)
      }
      const last = new Map((await observer<Array<{ pid: number; statement: string }>>`
        select pid, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 50) as statement from pg_stat_activity
        where datname = ${dbName}`).map((row) => [row.pid, row.statement.trim()]))
      let pg = 0
      const backends: Array<string> = []
      for (const [pid, ms] of backendsAfter) {
        const delta = ms - (backendsBefore.get(pid) ?? 0)
        pg += delta
        if (delta / n >= 0.01) backends.push(`      ${(delta / n).toFixed(3)} ms  ${last.get(pid) ?? ""}`)
      }
      console.log(
        `${name} at ${rate}/s: server ${(serverMs / n).toFixed(3)} + PostgreSQL ${(pg / n).toFixed(3)} ms CPU a request` +
          ` (${result.ok} answered; by thread: ${threads.join(", ")})\n${backends.join("\n")}`
      )
    }
  }
} finally {
  await server.stop()
  await observer.end()
  if (process.env.KEEP_DB !== "1") await db.drop()
}
