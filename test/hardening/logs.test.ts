import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { keyOver, type RunningServer, signupOver, startServer } from "./server.js"

/**
 * The real server's edge: a body declared over MAX_BODY_BYTES is refused by the
 * service itself (JSON, request id, security headers) rather than by Bun's bare 413; an MCP
 * request's log line names its account like any other authenticated request.
 */
describe("request edge of the real server (embedded database)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-logs-"))
  let server: RunningServer
  let key: string

  beforeAll(async () => {
    server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: "", MAX_BODY_BYTES: String(64 * 1024) })
    const cookie = await signupOver(server.base, "logs@example.test")
    key = (await keyOver(server.base, cookie)).key
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("413 as JSON with the request id and the security headers for a body over the cap", async () => {
    for (const path of ["/api/v1/auth/login", "/api/public/v1/agents/ingest", "/mcp"]) {
      const response = await fetch(`${server.base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-request-id": "big-body-1" },
        body: "x".repeat(200 * 1024)
      })
      expect(response.status).toBe(413)
      expect(await response.text()).toBe(`{"error":"request body too large: at most 65536 bytes"}`)
      expect(response.headers.get("x-request-id")).toBe("big-body-1")
      expect(response.headers.get("x-content-type-options")).toBe("nosniff")
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    }
  })

  it("a chunked body is counted as it is read: 413 past the cap, served as usual under it", async () => {
    const chunked = (text: string, times: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < times; i++) controller.enqueue(new TextEncoder().encode(text))
          controller.close()
        }
      })
    const big = await fetch(`${server.base}/api/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunked("x".repeat(16 * 1024), 16),
      duplex: "half"
    } as RequestInit)
    expect(big.status).toBe(413)
    expect(await big.text()).toBe(`{"error":"request body too large: at most 65536 bytes"}`)
    expect(big.headers.get("x-request-id")).not.toBeNull()
    expect(big.headers.get("x-content-type-options")).toBe("nosniff")
    const small = await fetch(`${server.base}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunked(JSON.stringify({ email: "logs@example.test", password: "a long password" }), 1),
      duplex: "half"
    } as RequestInit)
    expect(small.status).toBe(200)
  })

  it("an MCP request's log line names the account", async () => {
    const response = await fetch(`${server.base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "logs-test", version: "1" } }
      })
    })
    expect(response.status).toBe(200)
    await response.arrayBuffer()
    // Request lines are written in batches (at most 100 ms apart).
    let line: Record<string, unknown> | undefined
    for (let i = 0; i < 50 && line === undefined; i++) {
      await Bun.sleep(50)
      line = server.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.message === "request" && l.route === "/mcp" && l.status === 200)
    }
    expect(line).toBeDefined()
    expect(typeof line!.account_id).toBe("number")
    expect(server.stdout()).not.toContain(key)
  })
})
