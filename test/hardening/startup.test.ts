import { afterAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./server.js"

/**
 * Start-up (docs/security.md): from the first request the port answers, every answer is the app's
 * (JSON, request id); before that, connections are refused. A drain delivery must never meet a
 * 404 that is not the app's while the server is still starting (a platform reads it as "unknown site").
 */
describe("start-up: the port answers only once the app is installed", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-startup-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it("hammered from the moment the process starts, it never answers a non-app 404", async () => {
    const port = freePort()
    const base = `http://127.0.0.1:${port}`
    const child = Bun.spawn(["bun", "run", "src/app/main.ts"], {
      cwd: join(import.meta.dir, "..", ".."),
      env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: "", LOG_REQUESTS: "false" },
      stdout: "ignore",
      stderr: "ignore"
    })
    const answers: Array<{ status: number; json: boolean; requestId: boolean; path: string }> = []
    const until = Date.now() + 45_000
    let healthy = false
    try {
      while (!healthy && Date.now() < until) {
        for (const path of ["/healthz", "/api/public/v1/agents/ingest/drain?site_id=00000000-0000-4000-8000-000000000000"]) {
          try {
            const response = await fetch(base + path, path === "/healthz" ? {} : { method: "POST", body: "{}", headers: { authorization: "Bearer aivkey_x" } })
            const text = await response.text()
            let json = false
            try {
              JSON.parse(text)
              json = true
            } catch {
              json = false
            }
            answers.push({ status: response.status, json, requestId: response.headers.get("x-request-id") !== null, path })
            if (path === "/healthz" && response.status === 200) healthy = true
          } catch {
            // Not listening yet: refused, as a platform expects from a restarting server.
          }
        }
        await Bun.sleep(2)
      }
    } finally {
      child.kill("SIGTERM")
      await child.exited
    }
    expect(healthy).toBe(true)
    expect(answers.length).toBeGreaterThan(0)
    // Every answer is the app's: JSON with a request id, and no 404 on /healthz.
    expect(answers.filter((a) => !a.json || !a.requestId)).toEqual([])
    expect(answers.filter((a) => a.path === "/healthz" && a.status === 404)).toEqual([])
    expect(answers[0]!.path === "/healthz" ? answers[0]!.status : 200).toBe(200)
  }, 90_000)
})
