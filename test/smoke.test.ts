import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./hardening/server.js"

/** The one test that starts the real server (`bun run start`) on a port, on a fresh embedded database. */
describe("smoke: the real server", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-smoke-"))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  let server: ReturnType<typeof Bun.spawn>

  beforeAll(async () => {
    server = Bun.spawn(["bun", "run", "start"], {
      cwd: join(import.meta.dir, ".."),
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "" },
      stdout: "ignore",
      stderr: "ignore"
    })
    for (let i = 0; i < 300; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) return
      } catch {
        // not up yet
      }
      await Bun.sleep(100)
    }
    throw new Error("server did not come up")
  }, 60_000)
  afterAll(async () => {
    server.kill("SIGTERM")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("signs up, creates a key and lists brands over HTTP", async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok", database: "pglite" })
    const signup = await fetch(`${base}/api/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "smoke@example.test", password: "smoke-password", account_name: "Smoke" })
    })
    expect(signup.status).toBe(201)
    const cookie = signup.headers.get("set-cookie")!.split(";")[0]!
    const created = await fetch(`${base}/api/v1/me/api-keys`, {
      method: "POST",
      // A cookie-authenticated change names its origin, as a browser does (docs/security.md).
      headers: { "content-type": "application/json", cookie, origin: base },
      body: JSON.stringify({ name: "smoke" })
    })
    expect(created.status).toBe(201)
    const { key } = (await created.json()) as { key: string }
    const brands = await fetch(`${base}/api/public/v1/brands`, { headers: { authorization: `Bearer ${key}` } })
    expect(brands.status).toBe(200)
    expect(await brands.json()).toEqual({ brands: [], count: 0, limit: 1 })
    const missing = await fetch(`${base}/api/public/v1/brands`)
    expect(missing.status).toBe(401)
    expect(await missing.text()).toBe(`{"error":"missing Authorization header"}`)
  })

  it("refuses a body over the size cap without a 5xx", async () => {
    const response = await fetch(`${base}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(40 * 1024 * 1024)
    }).catch(() => undefined)
    // The service refuses a declared length over MAX_BODY_BYTES (32 MiB) itself, unread.
    expect(response?.status).toBe(413)
    expect(await response!.text()).toBe(`{"error":"request body too large: at most ${32 * 1024 * 1024} bytes"}`)
  })
})
