import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bearer, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { type RunningServer, startServer } from "./server.js"

/**
 * Bounds at the edge of the service (docs/security.md, "Bounds on a request's cost"): over-long request
 * targets and headers answered by the app, not by Bun; MCP messages the protocol forbids or that nest
 * without end refused at once.
 */

describe("over-long request targets and headers: the app's JSON error with a request id (a real server)", () => {
  let server: RunningServer
  let dataDir: string
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "aiv-edge-bounds-"))
    server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: "" })
  }, 60_000)
  afterAll(async () => {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const expectJsonError = async (response: Response, status: number, text: string) => {
    expect(response.status).toBe(status)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(await response.json()).toEqual({ error: expect.stringContaining(text) })
  }

  it("a 20 KB header: 431 JSON; a 10 KB or 40 KB query: 414 JSON; ordinary requests untouched", async () => {
    await expectJsonError(await fetch(`${server.base}/healthz`, { headers: { "x-big": "x".repeat(20_000) } }), 431, "headers too large")
    await expectJsonError(await fetch(`${server.base}/healthz`, { headers: { cookie: `a=${"y".repeat(30_000)}` } }), 431, "headers too large")
    await expectJsonError(await fetch(`${server.base}/api/public/v1/brands?q=${"z".repeat(10_000)}`), 414, "target too long")
    await expectJsonError(await fetch(`${server.base}/${"p".repeat(40_000)}`), 414, "target too long")
    const fine = await fetch(`${server.base}/healthz?q=${"z".repeat(4_000)}`, { headers: { "x-some": "x".repeat(8_000) } })
    expect(fine.status).toBe(200)
  })
})

describe("POST /mcp: an id of null and deep nesting are refused at once", () => {
  let app: TestApp
  let key: string
  beforeAll(async () => {
    app = await makeTestApp("fake")
    const cookie = await signup(app, "mcp-bounds@example.test")
    key = (await createKey(app, cookie)).key
  })
  afterAll(() => app.dispose())

  const mcp = (body: string) =>
    app.fetch("/mcp", {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
      body
    })

  it("a request with \"id\": null is an Invalid Request (-32600, id null), not a notification", async () => {
    for (const method of ["ping", "tools/list", "notifications/initialized"]) {
      const response = await mcp(JSON.stringify({ jsonrpc: "2.0", id: null, method }))
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("id") } })
    }
    // In a batch: that message's error beside the others' answers.
    const batch = await mcp(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }, { jsonrpc: "2.0", id: null, method: "ping" }]))
    expect(batch.status).toBe(200)
    expect(await batch.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("id") } }
    ])
  })

  it("params nested 100,000 deep: -32600 at once, nothing dispatched", async () => {
    for (const depth of [100_000, 1_000]) {
      const nested = "[".repeat(depth) + "]".repeat(depth)
      const bodies = [
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_brands","arguments":{"x":${nested}}}}`,
        `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":${nested}}}`,
        `[{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":${nested}}}]`
      ]
      for (const body of bodies) {
        const started = performance.now()
        const response = await mcp(body)
        const elapsed = performance.now() - started
        expect(response.status).toBe(400)
        expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("nested") } })
        expect(elapsed).toBeLessThan(200)
      }
    }
    // Ordinary nesting is untouched.
    const fine = await mcp(`{"jsonrpc":"2.0","id":6,"method":"ping","params":{"_meta":{"a":{"b":[1,[2,[3]]]}}}}`)
    expect(fine.status).toBe(200)
    expect(await fine.json()).toEqual({ jsonrpc: "2.0", id: 6, result: {} })
  })
})
