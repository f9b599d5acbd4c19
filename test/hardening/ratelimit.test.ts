import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Context, Effect, Layer, Option, Redacted, Scope } from "effect"
import { AppConfig, appConfigTest, parseRateLimitRule, type RateLimitRules } from "../../src/platform/Config.js"
import { metrics } from "../../src/platform/Metrics.js"
import { makeMemoryStore, RateLimiter, RateLimiterLive } from "../../src/platform/RateLimiter.js"
import { bearer, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { limitRules } from "../helpers/limits.js"

/** Rate limits: token buckets in process and in Redis (REDIS_URL), and the HTTP answers. */

const rules = limitRules

describe("token bucket arithmetic", () => {
  it("parses <requests>/<seconds> and off", () => {
    expect(parseRateLimitRule("600/60")).toEqual({ limit: 600, windowSeconds: 60 })
    expect(parseRateLimitRule(" 10 / 1.5s ")).toEqual({ limit: 10, windowSeconds: 1.5 })
    expect(parseRateLimitRule("off")).toEqual({ limit: 0, windowSeconds: 1 })
    expect(parseRateLimitRule("0")).toEqual({ limit: 0, windowSeconds: 1 })
    expect(parseRateLimitRule("ten per minute")).toBeUndefined()
    expect(parseRateLimitRule("5/0")).toBeUndefined()
  })

  it("a bucket of 3 per 60 s: three pass, the fourth waits 20 s; it refills evenly; all or none of several buckets", () => {
    let now = 1_000_000
    const store = makeMemoryStore(() => now)
    const rule = { limit: 3, windowSeconds: 60 }
    const take = () => store.take([{ bucket: "a", rule }])
    expect([take(), take(), take()].map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0]])
    const refused = take()
    // Refused: RateLimit-Reset names the moment Retry-After does.
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 20, retryAfterSeconds: 20 })
    now += 20_000
    expect(take().allowed).toBe(true)
    expect(take().allowed).toBe(false)
    // Two buckets: one empty refuses the request and takes nothing from the other.
    const other = { bucket: "b", rule: { limit: 10, windowSeconds: 60 } }
    expect(store.take([other, { bucket: "a", rule }]).allowed).toBe(false)
    const b = store.take([other])
    expect(b.remaining).toBe(9)
  })
})

/** A limiter as a server process builds it (its scope, and so its Redis connection, stays open). */
const limiter = (overrides: Partial<RateLimitRules>, extra: Parameters<typeof appConfigTest>[0] = {}) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        RateLimiterLive.pipe(Layer.provide(appConfigTest({ rateLimits: rules(overrides), ...extra }))),
        scope
      )
      return Context.get(context, RateLimiter)
    })
  )

describe("the RateLimiter service (what the tag's collect endpoint calls)", () => {
  it("checkSite counts per site; 0 means no limit", async () => {
    const service = await limiter({ collectSite: { limit: 2, windowSeconds: 60 } })
    const site = crypto.randomUUID()
    const answers = await Promise.all([1, 2, 3].map(() => Effect.runPromise(service.checkSite(site))))
    expect(answers.map((d) => Option.getOrThrow(d).allowed)).toEqual([true, true, false])
    expect(Option.getOrThrow(await Effect.runPromise(service.checkSite(crypto.randomUUID()))).allowed).toBe(true)
    const unlimited = await limiter({})
    expect(Option.isNone(await Effect.runPromise(unlimited.checkSite(site)))).toBe(true)
  })
})

const redisUrl = process.env.REDIS_URL
describe.skipIf(!redisUrl)("Redis store (REDIS_URL)", () => {
  const prefix = `aiv-test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}:`
  const redis = { redisUrl: Option.some(Redacted.make(redisUrl ?? "")), redisPrefix: prefix }

  afterAll(async () => {
    const { RedisClient } = await import("bun")
    const client = new RedisClient(redisUrl!)
    const keys = (await client.send("KEYS", [`${prefix}*`])) as Array<string>
    if (keys.length > 0) await client.send("DEL", keys)
    client.close()
  })

  it("two limiters (two processes) share one bucket exactly, under concurrency", async () => {
    const rule = { collectSite: { limit: 20, windowSeconds: 3600 } }
    const [a, b] = await Promise.all([limiter(rule, redis), limiter(rule, redis)])
    expect(a.store).toBe("redis")
    const site = crypto.randomUUID()
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => Effect.runPromise((i % 2 === 0 ? a : b).checkSite(site)))
    )
    const allowed = answers.filter((d) => Option.getOrThrow(d).allowed).length
    expect(allowed).toBe(20)
    const refused = Option.getOrThrow(answers.find((d) => !Option.getOrThrow(d).allowed)!)
    expect(refused.limit).toBe(20)
    expect(refused.remaining).toBe(0)
    expect(refused.retryAfterSeconds).toBe(180)
  })

  it("fails open, quickly, when Redis does not answer (and counts it)", async () => {
    const down = await limiter(
      { collectSite: { limit: 1, windowSeconds: 60 } },
      { redisUrl: Option.some(Redacted.make("redis://127.0.0.1:1")), redisPrefix: prefix }
    )
    const before = metrics.rateLimitStoreErrors
    const started = Date.now()
    const answer = await Effect.runPromise(down.checkSite("x"))
    expect(Option.isNone(answer)).toBe(true)
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(metrics.rateLimitStoreErrors).toBe(before + 1)
  })
})

describe("rate limits over HTTP (in process, fake repositories)", () => {
  let app: TestApp
  beforeAll(async () => {
    app = await makeTestApp("fake", {
      config: {
        rateLimits: rules({
          apiKey: { limit: 3, windowSeconds: 60 },
          apiIp: { limit: 8, windowSeconds: 60 },
          authEmail: { limit: 2, windowSeconds: 300 },
          authIp: { limit: 12, windowSeconds: 300 }
        })
      }
    })
  })
  afterAll(() => app.dispose())

  it("per API key: 429 {error} with Retry-After and RateLimit headers; headers on the 200s too; other keys unaffected", async () => {
    const cookie = await signup(app, "limits@example.test")
    const { key } = await createKey(app, cookie)
    const ok = [] as Array<Response>
    for (let i = 0; i < 3; i++) ok.push(await app.fetch("/api/public/v1/brands", { headers: bearer(key) }))
    expect(ok.map((r) => r.status)).toEqual([200, 200, 200])
    expect(ok.map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0"])
    expect(ok[0]!.headers.get("ratelimit-limit")).toBe("3")
    expect(Number(ok[0]!.headers.get("ratelimit-reset"))).toBeGreaterThan(0)
    const refused = await app.fetch("/api/public/v1/brands", { headers: bearer(key) })
    expect(refused.status).toBe(429)
    expect(await refused.text()).toBe(`{"error":"rate limit exceeded"}`)
    expect(refused.headers.get("retry-after")).toBe("20")
    expect(refused.headers.get("ratelimit-limit")).toBe("3")
    expect(refused.headers.get("ratelimit-remaining")).toBe("0")
    expect(refused.headers.get("content-type")).toContain("application/json")
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff")
    // A different key (even an unknown one) has its own bucket: it reaches the bearer check.
    const other = await app.fetch("/api/public/v1/brands", { headers: bearer("aivkey_unknown") })
    expect(other.status).toBe(401)
  })

  it("per client IP: requests without a key (and with other keys) share the IP's bucket, /mcp included", async () => {
    // 8 per IP: 4 already spent above (plus the 401); the rest of the bucket goes now.
    const statuses: Array<number> = []
    for (let i = 0; i < 6; i++) statuses.push((await app.fetch(i % 2 === 0 ? "/api/public/v1/brands" : "/mcp", { method: i % 2 === 0 ? "GET" : "POST" })).status)
    // 4 of 8 were spent above (3 answered, 1 unknown key; the refused one took nothing).
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429])
    // The dashboard surface is not the public surface: not limited by these buckets.
    expect((await app.fetch("/healthz")).status).toBe(200)
  })

  it("login and signup: per email, whatever the case, and per IP", async () => {
    const login = (email: string) =>
      app.fetch("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "wrong password" })
      })
    expect((await login("victim@example.test")).status).toBe(401)
    expect((await login("VICTIM@example.test ")).status).toBe(401)
    const third = await login("victim@example.test")
    expect(third.status).toBe(429)
    expect(await third.text()).toBe(`{"error":"rate limit exceeded"}`)
    expect(Number(third.headers.get("retry-after"))).toBe(150)
    // Another email still gets through, until the IP's bucket (12) is spent.
    const statuses: Array<number> = []
    for (let i = 0; i < 12; i++) statuses.push((await login(`guess${i}@example.test`)).status)
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(401))
    expect(statuses.at(-1)).toBe(429)
    // A malformed body is still answered by the endpoint itself (400), not by the limiter.
    const malformed = await app.fetch("/api/v1/auth/signup", { method: "POST", headers: { "content-type": "application/json" }, body: "{" })
    expect([400, 429]).toContain(malformed.status)
  })
})

describe("AppConfig from the environment", () => {
  it("rejects a malformed limit with the variable's name", async () => {
    const { appConfigFromEnv } = await import("../../src/platform/Config.js")
    const { ConfigProvider } = await import("effect")
    const result = await Effect.runPromise(
      Effect.either(Effect.withConfigProvider(appConfigFromEnv, ConfigProvider.fromMap(new Map([["RATE_LIMIT_API_KEY", "lots"]]))))
    )
    expect(result._tag).toBe("Left")
    expect(String((result as { left: unknown }).left)).toContain("RATE_LIMIT_API_KEY")
    const ok = await Effect.runPromise(Effect.withConfigProvider(appConfigFromEnv, ConfigProvider.fromMap(new Map())))
    expect(ok.rateLimits.apiKey).toEqual({ limit: 6000, windowSeconds: 60 })
    void AppConfig
  })
})
