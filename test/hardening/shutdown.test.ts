import { afterAll, describe, expect, it } from "bun:test"
import { PGlite } from "@electric-sql/pglite"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { brandOver, drainBody, keyOver, signupOver, startServer } from "./server.js"

/**
 * Graceful shutdown: SIGTERM in the middle of continuous drain deliveries. Every
 * delivery answered 200 has all its hits stored; the process exits 0; each request left one
 * JSON log line that names the route template and the account, never a key or a cookie.
 */
describe("SIGTERM during drain deliveries (real server, embedded database)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-shutdown-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it("stops accepting, finishes what is in flight, and every answered hit is stored", async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: "", SHUTDOWN_GRACE_MS: "10000" }
    // 1. An account with a brand and a key; then a clean stop (the embedded database has one owner).
    const first = await startServer(env)
    const cookie = await signupOver(first.base, "shutdown@example.test")
    const { site_id } = await brandOver(first.base, cookie, "acme")
    const { key } = await keyOver(first.base, cookie)
    expect(await first.stop()).toBe(0)
    // 2. The drain needs the growth plan (set in the database itself, as the operator CLI would).
    const db = await PGlite.create(dataDir)
    await db.exec(`update accounts set plan_id = 'growth'`)
    await db.close()

    const server = await startServer(env)
    const url = `${server.base}/api/public/v1/agents/ingest/drain?site_id=${site_id}`
    const answered: Array<{ tag: string; accepted: number; at: number }> = []
    const refused: Array<number> = []
    let sent = 0
    let stopAt = 0
    const sender = async (worker: number) => {
      for (let n = 0; ; n++) {
        const tag = `w${worker}n${n}`
        sent++
        try {
          const response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: drainBody(tag, 20) })
          if (response.status === 200) {
            answered.push({ tag, accepted: ((await response.json()) as { accepted: number }).accepted, at: Date.now() })
          }
          else {
            refused.push(response.status)
            await response.arrayBuffer()
          }
        } catch {
          // Connection refused or closed: the server is gone, or going.
          if (stopAt > 0) return
        }
        if (stopAt > 0 && Date.now() - stopAt > 15_000) return
      }
    }
    const senders = Array.from({ length: 6 }, (_, i) => sender(i))
    while (answered.length < 30) await Bun.sleep(20)
    stopAt = Date.now()
    server.process.kill("SIGTERM")
    const code = await server.process.exited
    await Promise.all(senders)
    expect(code).toBe(0)
    const answeredBefore = answered.length
    expect(answeredBefore).toBeGreaterThanOrEqual(30)
    // Nothing but the shutdown's own 503 (and no 5xx of another kind).
    for (const status of refused) expect(status).toBe(503)

    const check = await PGlite.create(dataDir)
    const rows = (await check.query<{ path: string }>(`select path from crawler_hits`)).rows
    await check.close()
    const stored = new Set(rows.map((r) => r.path))
    expect(stored.size).toBe(rows.length) // no hit twice
    let missing = 0
    for (const { tag, accepted } of answered) {
      expect(accepted).toBe(20)
      for (let i = 0; i < 20; i++) if (!stored.has(`/${tag}/${i}`)) missing++
    }
    expect(missing).toBe(0)

    // The logs: JSON lines; the drain's route template with the account; no key, no cookie.
    const out = server.stdout() + first.stdout()
    expect(out).not.toContain(key)
    expect(out).not.toContain(cookie.split("=")[1]!)
    const lines = out.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
    const drains = lines.filter((l) => l.message === "request" && l.route === "/api/public/v1/agents/ingest/drain" && l.status === 200)
    expect(drains.length).toBe(answered.length)
    expect(typeof drains[0]!.account_id).toBe("number")
    expect(typeof drains[0]!.duration_ms).toBe("number")
    expect(drains[0]!.method).toBe("POST")
    expect(lines.some((l) => String(l.message).startsWith("shutdown: in-flight done"))).toBe(true)
    // Requests in flight when the signal came were finished, not cut off.
    const afterSignal = answered.filter((a) => a.at > stopAt).length
    expect(afterSignal).toBeGreaterThan(0)
    console.log(`answered after SIGTERM: ${afterSignal}; sent ${sent}, answered 200: ${answered.length} (${answered.length * 20} hits, all stored), refused while draining: ${refused.length}`)
  }, 120_000)
})
