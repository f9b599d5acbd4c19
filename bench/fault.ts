/**
 * Fault: PostgreSQL stopped for 30 s in the middle of continuous drain deliveries.
 * Runs on its own temporary cluster (pg_createcluster ... aivfault on port 5499, dropped at the
 * end), never on the shared server. Every delivery answered 200 must be stored exactly once after
 * the database returns (the spool and its replay): prints hits sent, stored, lost and duplicated.
 *
 *   bun run bench/fault.ts         (needs pg_createcluster/pg_ctlcluster, run as root or postgres)
 *
 * BEFORE (10 s), DOWN (30 s), AFTER (10 s); 4 senders; deliveries of 20 records (10 crawler hits).
 */
import { spawnSync } from "bun"
import postgres from "postgres"
import { drainBody, loadAverage, peakRssMiB, seedAccount, startServer } from "./support.js"

const before = Number(process.env.BEFORE ?? 10) * 1000
const down = Number(process.env.DOWN ?? 30) * 1000
const after = Number(process.env.AFTER ?? 10) * 1000
const version = spawnSync(["ls", "/etc/postgresql"]).stdout.toString().trim().split("\n")[0]!
const cluster = "aivfault"
const port = 5499
const run = (...argv: Array<string>) => {
  const out = spawnSync(argv)
  if (out.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${out.stderr.toString()}`)
}
const ctl = (action: "start" | "stop") => run("pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, action)

spawnSync(["pg_dropcluster", "--stop", version, cluster])
run("pg_createcluster", version, cluster, "-p", String(port), "--", "--auth=trust")
ctl("start")
const url = `postgres://postgres@127.0.0.1:${port}/postgres`
const spool = `/tmp/aiv-fault-spool-${Date.now()}`
let server: Awaited<ReturnType<typeof startServer>> | undefined
try {
  server = await startServer({ DATABASE_URL: url, DATA_DIR: "memory://", SPOOL_DIR: spool, SPOOL_RETRY_MAX_MS: "2000" }, 18432)
  const { key, sites } = await seedAccount(server.base, url, 1)
  const target = `${server.base}/api/public/v1/agents/ingest/drain?site_id=${sites[0]!.siteId}`
  const answered: Array<string> = []
  const statuses = new Map<string, number>()
  let stop = false
  let n = 0
  const sender = async () => {
    while (!stop) {
      const tag = `f${n++}`
      let outcome: string
      try {
        const response = await fetch(target, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: drainBody(tag, 10, 10) })
        outcome = String(response.status)
        await response.arrayBuffer()
        if (response.status === 200) answered.push(tag)
      } catch (error) {
        outcome = `network: ${(error as Error).message.slice(0, 40)}`
      }
      statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1)
      await Bun.sleep(20)
    }
  }
  const senders = Array.from({ length: 4 }, sender)
  await Bun.sleep(before)
  const stoppedAt = Date.now()
  ctl("stop")
  console.log(`fault: database stopped after ${answered.length} answered deliveries`)
  await Bun.sleep(down)
  ctl("start")
  console.log(`fault: database started again after ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s; ${answered.length} answered so far`)
  await Bun.sleep(after)
  stop = true
  await Promise.all(senders)
  // Wait for the spool to drain (the replay backs off up to SPOOL_RETRY_MAX_MS).
  const until = Date.now() + 60_000
  let depth = -1
  while (Date.now() < until) {
    const metrics = await (await fetch(`${server.base}/metrics`)).text()
    depth = Number(/^aiv_spool_depth (\d+)$/m.exec(metrics)?.[1] ?? -1)
    if (depth === 0) break
    await Bun.sleep(500)
  }
  const db = postgres(url, { max: 1, onnotice: () => {} })
  const rows = await db<Array<{ path: string; n: number }>>`select path, count(*)::int as n from crawler_hits group by path`
  await db.end()
  const stored = new Map(rows.map((r) => [r.path, r.n]))
  let lost = 0
  for (const tag of answered) for (let i = 0; i < 10; i++) if (!stored.has(`/${tag}/${i}`)) lost++
  const duplicated = rows.filter((r) => r.n > 1).length
  console.log(`fault: ${answered.length} deliveries answered 200 (${answered.length * 10} crawler hits); statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  console.log(`  stored ${rows.length} distinct hits; lost ${lost}; duplicated ${duplicated}; spool depth at the end ${depth}`)
  console.log(`  server peak RSS ${(await peakRssMiB(server.proc.pid)).toFixed(0)} MiB; load average ${await loadAverage()}`)
  if (lost > 0 || duplicated > 0) process.exitCode = 1
} finally {
  await server?.stop()
  spawnSync(["pg_dropcluster", "--stop", version, cluster])
  spawnSync(["rm", "-rf", spool])
}
