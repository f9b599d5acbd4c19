import { afterAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../hardening/server.js"
import { serverSchemaUrl } from "../helpers/app.js"
import { waitForDemo } from "../web/chromium.js"

/**
 * `DEMO=1 bun run start` as an operator runs it (a real process, fresh database): the server answers
 * /healthz within 15 s, with the demo's account, brands and key made and its days of data filling in
 * the background; GET /api/v1/me tells the demo account so; its scan status and next scan agree with
 * the data; and once filled every day is there. On the embedded database, and on PostgreSQL when
 * TEST_DATABASE_URL is set.
 */

const ROOT = join(import.meta.dir, "..", "..")
const READY_WITHIN_MS = 15_000

const databases = async (): Promise<ReadonlyArray<{ readonly name: string; readonly env: () => Promise<Record<string, string>> }>> => [
  { name: "embedded", env: async () => ({ DATABASE_URL: "" }) },
  ...(process.env.TEST_DATABASE_URL
    ? [{ name: "postgres", env: async () => ({ DATABASE_URL: await serverSchemaUrl(process.env.TEST_DATABASE_URL!) }) }]
    : [])
]

const start = async (env: Record<string, string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-demo-start-"))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  const started = performance.now()
  const server = Bun.spawn(["bun", "run", "start"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DEMO: "1", ...env },
    stdout: "ignore",
    stderr: "ignore"
  })
  const stop = async () => {
    server.kill("SIGTERM")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  let healthyAfterMs: number | null = null
  while (performance.now() - started < 180_000 && server.exitCode === null) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) {
      healthyAfterMs = performance.now() - started
      break
    }
    await Bun.sleep(50)
  }
  return { base, healthyAfterMs, server, stop }
}

const signIn = async (base: string) => {
  const response = await fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify({ email: "demo@example.com", password: "demo-password-2026" })
  })
  expect(response.status).toBe(200)
  return (response.headers.get("set-cookie") ?? "").split(";")[0]!
}

const read = async (base: string, path: string, cookie: string): Promise<any> => {
  const response = await fetch(`${base}${path}`, { headers: { cookie } })
  expect({ path, status: response.status }).toEqual({ path, status: 200 })
  return response.json()
}

describe("DEMO=1 bun run start", async () => {
  const stops: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const stop of stops) await stop()
  })

  for (const database of await databases()) {
    it(`${database.name}: /healthz within 15 s, the 90 days filling in the background and said so`, async () => {
      const served = await start(await database.env())
      stops.push(served.stop)
      console.info(`DEMO=1 (${database.name}, 90 days): /healthz after ${served.healthyAfterMs === null ? "never" : `${(served.healthyAfterMs / 1000).toFixed(1)} s`}`)
      expect(served.healthyAfterMs).not.toBeNull()
      expect(served.healthyAfterMs!).toBeLessThan(READY_WITHIN_MS)

      const cookie = await signIn(served.base)
      const me = await read(served.base, "/api/v1/me", cookie)
      expect(me.data_fill.status).toBe("filling")
      expect(me.data_fill.days).toBe(90)
      expect(me.data_fill.finished_at).toBeNull()

      // The scan status and the next scan agree with the data: the last scan today, the next one ahead.
      const now = Date.now()
      const { brands } = await read(served.base, "/api/v1/me/brands", cookie)
      expect(brands.map((b: any) => b.brand_slug)).toEqual(["northwind-crm", "bramble-outfitters"])
      for (const brand of brands) {
        expect(Date.parse(brand.next_scan_at)).toBeGreaterThan(now)
        const scans = await read(served.base, `/api/v1/me/brands/${brand.brand_slug}/scans`, cookie)
        expect(scans.engines).toHaveLength(9)
        for (const engine of scans.engines) {
          expect(engine.scanned_at.slice(0, 10)).toBe(new Date(now).toISOString().slice(0, 10))
          expect(Date.parse(engine.scanned_at)).toBeLessThanOrEqual(now)
          expect([engine.observations, engine.failures, engine.last_error]).toEqual([120, 0, null])
        }
      }

      // Still serving while it fills, and a shutdown in the middle of the fill ends the process promptly.
      expect((await fetch(`${served.base}/healthz`)).status).toBe(200)
      const stopping = performance.now()
      served.server.kill("SIGTERM")
      await served.server.exited
      expect(performance.now() - stopping).toBeLessThan(30_000)
    }, 240_000)

    it(`${database.name}: once filled (DEMO_DAYS=2), every day of every brand is there and the fill says ready`, async () => {
      const served = await start({ ...(await database.env()), DEMO_DAYS: "2" })
      stops.push(served.stop)
      expect(served.healthyAfterMs).not.toBeNull()
      const cookie = await waitForDemo(served.base, 180_000)
      const me = await read(served.base, "/api/v1/me", cookie)
      expect(me.data_fill).toMatchObject({ status: "ready", days: 2, days_filled: 2 })
      for (const slug of ["northwind-crm", "bramble-outfitters"]) {
        const { snapshots } = await read(served.base, `/api/v1/me/brands/${slug}/snapshots?range=7d`, cookie)
        // 20 prompts x 9 engines x 2 regions x 3 samples a day, on the last two days.
        expect(snapshots.map((s: any) => s.total_responses)).toEqual([1080, 1080])
        const agents = await read(served.base, `/api/v1/me/brands/${slug}/agents?range=7d`, cookie)
        expect(agents.kpis.hits).toBeGreaterThan(0)
      }
    }, 240_000)
  }
})
