import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  bearer,
  createBrand,
  createKey,
  databaseBackends,
  makeTestApp,
  serverSchemaUrl,
  signup,
  type TestApp
} from "../helpers/app.js"
import { gatedSql } from "../helpers/gatedSql.js"
import { type RunningServer, startServer } from "./server.js"
import { limitRules, postMcp } from "../helpers/limits.js"

/**
 * Bounds at the edge of the service (docs/security.md, "Bounds on a request's cost"): reads in flight per
 * key and per session, the dashboard's reads rate limited like the public ones, a statement timeout
 * answered 503; over-long request targets and headers answered by the app, not by Bun; MCP messages the
 * protocol forbids or that nest without end refused at once.
 */

const rules = limitRules

/** Whether a promise is still pending after `ms`. */
const pendingAfter = async (promise: Promise<unknown>, ms: number) =>
  await Promise.race([promise.then(() => false, () => false), Bun.sleep(ms).then(() => true)])

describe("reads in flight per API key and per dashboard session: at most N, 429 with Retry-After beyond", () => {
  let app: TestApp
  let cookie: string
  let key: string
  let otherKey: string
  // While set, every statement waits for it: the reads started then stay in flight.
  let hold: { promise: Promise<void>; resolve: () => void } | undefined
  // While above 0, every statement of the agents' tables first waits this long; the most waiting at once is kept.
  let delayMs = 0
  let waiting = 0
  let mostWaiting = 0
  const slow = Effect.acquireUseRelease(
    Effect.sync(() => (mostWaiting = Math.max(mostWaiting, ++waiting))),
    () => Effect.sleep(delayMs),
    () => Effect.sync(() => waiting--)
  )
  const gate = (sql: string) =>
    Effect.suspend(() =>
      hold !== undefined ? Effect.promise(() => hold!.promise) : delayMs > 0 && sql.includes("crawler_") ? slow : Effect.void
    )

  beforeAll(async () => {
    app = await makeTestApp("pglite", { wrapSql: gatedSql(gate), config: { concurrentReads: { perKey: 2, perSession: 2 } } })
    cookie = await signup(app, "inflight@example.test")
    await createBrand(app, cookie, "acme")
    key = (await createKey(app, cookie)).key
    const other = await signup(app, "inflight-other@example.test")
    await createBrand(app, other, "acme")
    otherKey = (await createKey(app, other)).key
  })
  afterAll(() => app.dispose())

  const read = (headers: Record<string, string>, path = "/api/public/v1/brands/acme/agents?range=90d") => app.fetch(path, { headers })
  const twin = () => read({ cookie }, "/api/v1/me/brands/acme/agents?range=90d")
  const mcp = (authorization: Record<string, string>) =>
    app.fetch("/mcp", {
      method: "POST",
      headers: { ...authorization, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_brands", arguments: {} } })
    })
  const expectRefused = async (answer: Promise<Response>, holder: string) => {
    // Refused at once, or still waiting on the database with the others (then this fails in 2 s).
    const response = await Promise.race([answer, Bun.sleep(2_000).then(() => new Response("still in flight after 2 s", { status: 599 }))])
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("1")
    expect(await response.json()).toEqual({ error: expect.stringContaining(`in flight for this ${holder}: at most 2`) })
  }

  it("two reads of a key in flight: its third read and its MCP call are refused at once; another key is not", async () => {
    let release!: () => void
    hold = { promise: new Promise<void>((resolve) => (release = resolve)), resolve: () => release() }
    const held = [read(bearer(key)), read(bearer(key))]
    const heldTwins = [twin(), twin()]
    const other = read(bearer(otherKey))
    try {
      expect(await pendingAfter(Promise.all([...held, ...heldTwins]), 100)).toBe(true)
      await expectRefused(read(bearer(key)), "API key")
      await expectRefused(mcp(bearer(key)), "API key")
      await expectRefused(twin(), "session")
    } finally {
      hold = undefined
      release()
    }
    for (const response of [...held, ...heldTwins, other]) expect((await response).status).toBe(200)
    // The slots were given back with the answers.
    expect((await read(bearer(key))).status).toBe(200)
    expect((await twin()).status).toBe(200)
    expect((await mcp(bearer(key))).status).toBe(200)
  })

  it("the tool calls of one MCP batch read one after another: a batch is one read in flight of its key", async () => {
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_brand_agents", arguments: { slug: "acme" } } })
    const post = async (body: unknown) => {
      const started = performance.now()
      const response = await app.fetch("/mcp", {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body)
      })
      expect(response.status).toBe(200)
      const answers: unknown = await response.json()
      expect(JSON.stringify(answers)).not.toContain(`"isError":true`)
      return { answers, ms: performance.now() - started }
    }
    // Warm: the key, the brand and its spans are known; each call now costs the same statements.
    await post(call(1))
    delayMs = 100
    try {
      const three = await post([call(3), call(4), call(5)])
      expect(three.answers).toHaveLength(3)
      // In parallel, the three calls' statements would wait side by side.
      expect(mostWaiting).toBe(1)
    } finally {
      delayMs = 0
    }
  })
})

describe("the dashboard's reads (the twins of the public reads) meet the public reads' rate limits", () => {
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake", { config: { rateLimits: rules({ apiKey: { limit: 3, windowSeconds: 600 } }) } })
  })
  afterAll(() => app.dispose())

  it("per session: three twin reads pass, the fourth is 429 with Retry-After; another session is untouched", async () => {
    const cookie = await signup(app, "twin-limit@example.test")
    await createBrand(app, cookie, "acme")
    const twin = (c: string) => app.fetch("/api/v1/me/brands/acme/agents?range=90d", { headers: { cookie: c } })
    for (let i = 0; i < 3; i++) expect((await twin(cookie)).status).toBe(200)
    const refused = await twin(cookie)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(refused.headers.get("ratelimit-limit")).toBe("3")
    expect(await refused.json()).toEqual({ error: "rate limit exceeded" })
    expect((await app.fetch("/api/v1/me/citations/fanouts?range=90d", { headers: { cookie } })).status).toBe(429)
    const other = await signup(app, "twin-limit-other@example.test")
    await createBrand(app, other, "acme")
    expect((await twin(other)).status).toBe(200)
  })
})

for (const backend of databaseBackends().filter((b) => b === "postgres")) {
  describe(`a statement timeout on the server's connections: 503 "took too long", not 500 (${backend})`, () => {
    let app: TestApp
    let url: string
    let cookie: string
    let key: string
    beforeAll(async () => {
      url = await serverSchemaUrl(process.env.TEST_DATABASE_URL!)
      app = await makeTestApp(backend, { serverUrl: url, config: { statementTimeoutMs: 400 } })
      cookie = await signup(app, "timeout@example.test")
      await createBrand(app, cookie, "acme")
      key = (await createKey(app, cookie)).key
    })
    afterAll(() => app.dispose())

    it("a read waiting on a lock past the timeout answers 503 with a clear error, at once after the timeout", async () => {
      const path = "/api/public/v1/brands/acme/agents?range=90d"
      expect((await app.fetch(path, { headers: bearer(key) })).status).toBe(200)
      const { Client } = await import("pg")
      const locker = new Client({ connectionString: url })
      await locker.connect()
      try {
        // Another session holds the crawler tables, as a long report or a migration would.
        await locker.query("begin")
        await locker.query(
          "lock table crawler_span, crawler_span_state, crawler_rollup, crawler_daily, crawler_page_span in access exclusive mode"
        )
        for (const [request, headers] of [[path, bearer(key)], ["/api/v1/me/brands/acme/agents?range=90d", { cookie }]] as const) {
          const started = performance.now()
          const response = await Promise.race([
            app.fetch(request, { headers }),
            Bun.sleep(5_000).then(() => new Response("still waiting after 5 s", { status: 599 }))
          ])
          expect(response.status).toBe(503)
          expect(await response.json()).toEqual({ error: expect.stringContaining("took too long") })
          expect(performance.now() - started).toBeLessThan(4_000)
        }
      } finally {
        await locker.query("rollback")
        await locker.end()
      }
      expect((await app.fetch(path, { headers: bearer(key) })).status).toBe(200)
    })
  })
}


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

  it("a 20 KB or 500 KB header: 431 JSON; a 10 KB or 40 KB query: 414 JSON; ordinary requests untouched", async () => {
    await expectJsonError(await fetch(`${server.base}/healthz`, { headers: { "x-big": "x".repeat(20_000) } }), 431, "headers too large")
    await expectJsonError(await fetch(`${server.base}/healthz`, { headers: { cookie: `a=${"y".repeat(30_000)}` } }), 431, "headers too large")
    // Up to Bun's own limit as `bun run start` sets it (1 MiB), still the app's answer.
    await expectJsonError(await fetch(`${server.base}/healthz`, { headers: { "x-big": "x".repeat(500_000) } }), 431, "headers too large")
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

  const mcp = (body: string) => postMcp(app, key, body)

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
