import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Option, Redacted } from "effect"
import { bearer, createBrand, createKey, databaseBackends, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { limitRules, postMcp } from "../helpers/limits.js"

/**
 * The holes an outside attack found (docs/security.md), each answered through the real app: other
 * spellings of a path, the CSRF guard, the sign-in limits whatever the body.
 */

const rules = limitRules

describe("one spelling of a path for every check", () => {
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake", {
      config: { rateLimits: rules({ apiKey: { limit: 2, windowSeconds: 600 }, authEmail: { limit: 2, windowSeconds: 600 } }) }
    })
  })
  afterAll(() => app.dispose())

  it("the per-email login limit holds for /api/v1/auth/login/, /API/v1/auth/login, //api/v1/auth/login, /%61pi/v1/auth/login", async () => {
    const spellings = ["/api/v1/auth/login", "/api/v1/auth/login/", "/API/v1/auth/login", "//api/v1/auth/login", "/%61pi/v1/auth/login", "/api/v1/auth/LOGIN;x"]
    const statuses: Array<number> = []
    for (const path of spellings) {
      const response = await app.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "spelled@example.test", password: "not the password" })
      })
      statuses.push(response.status)
    }
    // Two tries, then every spelling meets the same bucket.
    expect(statuses).toEqual([401, 401, 429, 429, 429, 429])
  })

  it("the per-key limit holds for //api/public/v1/brands, /API/PUBLIC/v1/brands/, /mcp/ and /MCP", async () => {
    const cookie = await signup(app, "spellings@example.test")
    const { key } = await createKey(app, cookie)
    const statuses: Array<number> = []
    for (const path of ["/api/public/v1/brands", "//api/public/v1/brands", "/API/PUBLIC/v1/brands/", "/%61pi/public/v1/brands"]) {
      statuses.push((await app.fetch(path, { headers: bearer(key) })).status)
    }
    expect(statuses).toEqual([200, 200, 429, 429])
    for (const path of ["/mcp/", "/MCP", "//mcp"]) {
      const response = await app.fetch(path, {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(response.status).toBe(429)
    }
  })
})

describe("the CSRF guard of the cookie surface", () => {
  let app: TestApp
  let cookie: string
  beforeAll(async () => {
    app = await makeTestApp("fake")
    cookie = await signup(app, "csrf@example.test")
  })
  afterAll(() => app.dispose())

  const keyCount = async () => {
    const response = await app.fetch("/api/v1/me/api-keys", { headers: { cookie } })
    return ((await response.json()) as { keys: Array<unknown> }).keys.length
  }

  it("a foreign Origin is refused whatever the spelling of the path", async () => {
    const before = await keyCount()
    for (const path of ["/api/v1/me/api-keys", "/API/v1/me/api-keys", "//api/v1/me/api-keys", "/%61pi/v1/me/api-keys", "/api/v1/me/api-keys/"]) {
      const response = await app.fetch(path, {
        method: "POST",
        headers: { cookie, origin: "https://sibling.localhost", "content-type": "application/json" },
        body: JSON.stringify({ name: "planted" })
      })
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({ error: "foreign origin" })
    }
    expect(await keyCount()).toBe(before)
  })

  it("form, multipart and text/plain bodies are refused 415 with a JSON error; nothing is created", async () => {
    const before = await keyCount()
    const form = new FormData()
    form.set("name", "planted")
    const bodies: Array<RequestInit> = [
      { body: "name=planted", headers: { cookie, origin: "http://localhost", "content-type": "application/x-www-form-urlencoded" } },
      { body: form, headers: { cookie, origin: "http://localhost" } },
      { body: JSON.stringify({ name: "planted" }), headers: { cookie, origin: "http://localhost", "content-type": "text/plain" } },
      { body: JSON.stringify({ name: "planted" }), headers: { cookie, origin: "http://localhost" } }
    ]
    for (const init of bodies) {
      const response = await app.fetch("/api/v1/me/api-keys", { method: "POST", ...init })
      expect(response.status).toBe(415)
      expect(((await response.json()) as { error: string }).error).toContain("content type")
    }
    expect(await keyCount()).toBe(before)
  })

  it("a cookie-authenticated change without Origin needs Sec-Fetch-Site: same-origin", async () => {
    const before = await keyCount()
    // "" stands for a request with neither header (the test app marks those same-origin, as a browser's own page).
    for (const site of ["same-site", "cross-site", "none", ""]) {
      const response = await app.fetch("/api/v1/me/api-keys", {
        method: "POST",
        headers: { cookie, "sec-fetch-site": site, "content-type": "application/json" },
        body: JSON.stringify({ name: "planted" })
      })
      expect(response.status).toBe(403)
    }
    expect(await keyCount()).toBe(before)
    const same = await app.fetch("/api/v1/me/api-keys", {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin", "content-type": "application/json" },
      body: JSON.stringify({ name: "mine" })
    })
    expect(same.status).toBe(201)
  })

  it("login with a multipart or form body: 415, never a 500", async () => {
    const form = new FormData()
    form.set("email", "csrf@example.test")
    form.set("password", "correct horse battery")
    const multipart = await app.fetch("/api/v1/auth/login", { method: "POST", body: form })
    expect(multipart.status).toBe(415)
    const urlencoded = await app.fetch("/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email=csrf%40example.test&password=correct+horse+battery"
    })
    expect(urlencoded.status).toBe(415)
    expect(urlencoded.headers.get("set-cookie")).toBeNull()
  })
})

describe("the per-email login limit, whatever the body", () => {
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake", { config: { rateLimits: rules({ authEmail: { limit: 2, windowSeconds: 600 } }) } })
  })
  afterAll(() => app.dispose())

  it("form bodies count against the email's bucket too", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 2; i++) {
      statuses.push((await app.fetch("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "email=formed%40example.test&password=wrong+password"
      })).status)
    }
    const json = await app.fetch("/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "formed@example.test", password: "wrong password" })
    })
    expect(statuses).toEqual([415, 415])
    expect(json.status).toBe(429)
  })
})

describe("one bounded inflater for every gzip body", () => {
  let app: TestApp
  let cookie: string
  beforeAll(async () => {
    app = await makeTestApp("fake")
    cookie = await signup(app, "bomb@example.test")
    await createBrand(app, cookie, "acme")
  })
  afterAll(() => app.dispose())

  it("an observation import that inflates to 128 MiB: 413 JSON, memory bounded, nothing imported", async () => {
    const member = Bun.gzipSync(new Uint8Array(64 * 1024 * 1024))
    const bomb = new Uint8Array(member.length * 2)
    bomb.set(member, 0)
    bomb.set(member, member.length)
    Bun.gc(true)
    const before = process.memoryUsage().rss
    const response = await app.fetch("/api/v1/me/brands/acme/observations", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: bomb
    })
    const grew = process.memoryUsage().rss - before
    expect(response.status).toBe(413)
    expect(((await response.json()) as { error: string }).error).toContain("inflates past")
    expect(grew).toBeLessThan(100 * 1024 * 1024)
    const bad = await app.fetch("/api/v1/me/brands/acme/observations", {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: new Uint8Array([0x1f, 0x8b, 1, 2, 3])
    })
    expect(bad.status).toBe(400)
  })
})

// In process, and through Redis (one token per message of a batch in the Lua script too) when REDIS_URL is set.
const stores = process.env.REDIS_URL ? ["memory", "redis"] as const : ["memory"] as const
for (const store of stores) describe(`POST /mcp: bounded batches, every call counted (${store}), standard JSON-RPC errors`, () => {
  let app: TestApp
  let key: string
  beforeAll(async () => {
    const redis = store === "redis"
      ? { redisUrl: Option.some(Redacted.make(process.env.REDIS_URL!)), redisPrefix: `aiv-test-${crypto.randomUUID()}:` }
      : {}
    app = await makeTestApp("fake", { config: { rateLimits: rules({ apiKey: { limit: 10, windowSeconds: 600 } }), ...redis } })
    const cookie = await signup(app, "mcp-batch@example.test")
    key = (await createKey(app, cookie)).key
  })
  afterAll(() => app.dispose())

  const mcp = (body: string) => postMcp(app, key, body)
  const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_brands", arguments: {} } })

  it("a batch of 4,000 calls is refused at once with a JSON-RPC error, and runs nothing", async () => {
    const started = performance.now()
    const response = await mcp(JSON.stringify(Array.from({ length: 4000 }, (_, i) => call(i))))
    expect(response.status).toBe(400)
    const body = (await response.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } }
    expect(body.jsonrpc).toBe("2.0")
    expect(body.id).toBeNull()
    expect(body.error.code).toBe(-32600)
    expect(body.error.message).toContain("at most 32")
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  it("each call of a batch counts against the key's limit", async () => {
    // 10 per key: 1 spent above; a batch of 8 takes 8 (9 in all); another of 2 does not fit.
    const first = await mcp(JSON.stringify(Array.from({ length: 8 }, (_, i) => call(i + 1))))
    expect(first.status).toBe(200)
    const answered = await first.text()
    expect(answered).toStartWith("[")
    expect((JSON.parse(answered) as Array<unknown>).length).toBe(8)
    const second = await mcp(JSON.stringify([call(100), call(101)]))
    expect(second.status).toBe(429)
    expect(await second.json()).toEqual({ error: "rate limit exceeded" })
  })
})

describe("MCP protocol errors are JSON-RPC error objects", () => {
  let app: TestApp
  let key: string
  beforeAll(async () => {
    app = await makeTestApp("fake")
    const cookie = await signup(app, "mcp-errors@example.test")
    key = (await createKey(app, cookie)).key
  })
  afterAll(() => app.dispose())

  const mcp = (body: string) => postMcp(app, key, body)

  it("parse error, invalid request, unknown method, unknown tool: code and message, nothing else", async () => {
    const parse = await mcp("{")
    expect(await parse.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.any(String) } })
    const invalid = await mcp(JSON.stringify({ foo: 1 }))
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } })
    const empty = await mcp("[]")
    expect(((await empty.json()) as { error: { code: number } }).error.code).toBe(-32600)
    const unknown = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "nope" }))
    expect(await unknown.json()).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: "Method not found: nope" } })
    const tool = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "nope", arguments: {} } }))
    expect(await tool.json()).toEqual({ jsonrpc: "2.0", id: 8, error: { code: -32602, message: "Tool 'nope' not found" } })
  })
})

for (const backend of databaseBackends()) {
  describe(`a NUL character is bad input (400), never a database outage (503), on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    let key: string
    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, "nul@example.test")
      key = (await createKey(app, cookie)).key
      await createBrand(app, cookie, "acme")
    }, 60_000)
    afterAll(() => app.dispose())

    it("in a query parameter (q, folder, bot, region) or a path parameter", async () => {
      for (const query of ["q=a%00b", "folder=%00", "bot=GPT%00Bot", "sort=%C3%28"]) {
        const response = await app.fetch(`/api/public/v1/brands/acme/agents/pages?${query}`, { headers: bearer(key) })
        expect(response.status).toBe(400)
        expect(((await response.json()) as { error: string }).error).toContain("NUL")
      }
      const mentions = await app.fetch("/api/public/v1/brands/acme/mentions?region=u%00", { headers: bearer(key) })
      expect(mentions.status).toBe(400)
      const competitor = await app.fetch("/api/public/v1/brands/acme/competitors/a%00b", { headers: bearer(key) })
      expect(competitor.status).toBe(400)
    })

    it("in a JSON body string", async () => {
      const response = await app.fetch("/api/v1/me/brands/acme/competitors", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ name: "Glo\u0000bex", domain: "globex.com" })
      })
      expect(response.status).toBe(400)
      const prompt = await app.fetch("/api/v1/me/brands/acme/prompts", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "best \u0000 tools" })
      })
      expect(prompt.status).toBe(400)
    })

    it("in an imported observation: that record is an error line, the others are stored", async () => {
      const observation = (i: number, extra: Record<string, unknown> = {}) => ({
        prompt: "best crm",
        engine: "perplexity",
        region: "US",
        language: "en",
        observed_at: new Date(Date.UTC(2026, 0, 1, 8, 0, i)).toISOString(),
        response: `Acme answer ${i}`,
        citations: [],
        ...extra
      })
      const response = await app.fetch("/api/v1/me/brands/acme/observations", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify([observation(1), observation(2, { response: "bad\u0000text" }), observation(3)])
      })
      expect(response.status).toBe(200)
      const body = (await response.json()) as { imported: number; errors: Array<{ line: number; error: string }> }
      expect(body.imported).toBe(2)
      expect(body.errors).toEqual([{ line: 2, error: expect.stringContaining("NUL") }])
    })
  })
}

describe("passwords, the session cookie's Secure flag, slug lengths", () => {
  let app: TestApp
  let proxied: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake")
    proxied = await makeTestApp("fake", { config: { trustProxy: true } })
  })
  afterAll(async () => {
    await app.dispose()
    await proxied.dispose()
  })

  const signupWith = (target: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
    target.fetch("/api/v1/auth/signup", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ email, password, account_name: "X" })
    })

  it("a password of spaces, or over 1024 bytes, is refused; a long one at login is not hashed", async () => {
    const spaces = await signupWith(app, "spaces@example.test", " ".repeat(10))
    expect(spaces.status).toBe(400)
    expect(await spaces.json()).toEqual({ error: "password must not be only whitespace" })
    const long = await signupWith(app, "long@example.test", "x".repeat(1025))
    expect(long.status).toBe(400)
    expect(await long.json()).toEqual({ error: "password must be at most 1024 bytes" })
    expect((await signupWith(app, "max@example.test", "é".repeat(512))).status).toBe(201)
    const started = performance.now()
    const login = await app.fetch("/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "max@example.test", password: "x".repeat(8 * 1024 * 1024) })
    })
    expect(login.status).toBe(401)
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it("X-Forwarded-Proto sets Secure only with TRUST_PROXY", async () => {
    const direct = await signupWith(app, "proto@example.test", "a long password", { "x-forwarded-proto": "https" })
    expect(direct.status).toBe(201)
    expect(direct.headers.get("set-cookie")).not.toContain("Secure")
    const behind = await signupWith(proxied, "proto@example.test", "a long password", { "x-forwarded-proto": "https" })
    expect(behind.status).toBe(201)
    expect(behind.headers.get("set-cookie")).toContain("Secure")
  })

  it("a brand slug is at most 64 characters", async () => {
    const cookie = await signup(app, "slugs@example.test")
    const brand = (slug: string) =>
      app.fetch("/api/v1/me/brands", {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ brand_slug: slug, brand_name: "X", domain: "x.com", vertical: "saas" })
      })
    const long = await brand("a".repeat(65))
    expect(long.status).toBe(400)
    expect(await long.json()).toEqual({ error: "invalid brand_slug: must be at most 64 characters" })
    expect((await brand("a".repeat(64))).status).toBe(201)
  })
})
