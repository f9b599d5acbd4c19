import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Redacted } from "effect"
import { AppConfig, appConfigTest, configSummary } from "../../src/platform/Config.js"
import { secretEquals } from "../../src/platform/Digest.js"
import { bearer, createBrand, createKey, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { gatedSql } from "../helpers/gatedSql.js"

/**
 * The hardening on the in-process app: request ids, security headers on every kind of answer, the
 * route-template metrics, /readyz, no stack trace in a 500, secrets redacted.
 */

// The repositories' SqlClient, switchable: "down" fails every statement as an outage would,
// "bug" throws a plain error (a defect that is not a database failure).
const gate = { mode: "up" as "up" | "down" | "bug" }
const check = Effect.suspend(() =>
  gate.mode === "down"
    ? Effect.fail(new SqlError({ cause: new Error("connect ECONNREFUSED"), message: "Connection refused" }))
    : gate.mode === "bug"
    ? Effect.die(new Error("boom: a bug with a secret aivkey_leak in its message"))
    : Effect.void
)
const wrapSql = gatedSql(check)

const SECURITY = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY"
}

const expectSecurityHeaders = (response: Response) => {
  for (const [name, value] of Object.entries(SECURITY)) expect(response.headers.get(name)).toBe(value)
  expect(response.headers.get("referrer-policy")).not.toBeNull()
  expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
  expect(response.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._:@\/+=-]{1,128}$/)
}

describe("edge hardening (in process, embedded database)", () => {
  let app: TestApp
  let key: string
  beforeAll(async () => {
    gate.mode = "up"
    app = await makeTestApp("pglite", { wrapSql })
    const cookie = await signup(app, "edge@example.test")
    await createBrand(app, cookie, "acme")
    key = (await createKey(app, cookie)).key
  }, 60_000)
  afterAll(async () => {
    gate.mode = "up"
    await app.dispose()
  })

  it("security headers and a request id on 200, 401, 404, 400 and the web page (whose CSP stays its own)", async () => {
    const answers = [
      await app.fetch("/api/public/v1/brands", { headers: bearer(key) }),
      await app.fetch("/api/public/v1/brands"),
      await app.fetch("/no/such/route"),
      await app.fetch("/api/public/v1/brands/acme/agents/pages?range=1y", { headers: bearer(key) }),
      await app.fetch("/healthz")
    ]
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 400, 200])
    for (const response of answers) expectSecurityHeaders(response)
    const page = await app.fetch("/")
    expect(page.status).toBe(200)
    expectSecurityHeaders(page)
    // The web app's own policy (scripts from self) is kept, not replaced by the API's.
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'")
  })

  it("echoes a client's X-Request-Id, generates one when absent or malformed", async () => {
    const echoed = await app.fetch("/healthz", { headers: { "x-request-id": "abc-123_DEF.9" } })
    expect(echoed.headers.get("x-request-id")).toBe("abc-123_DEF.9")
    const generated = await app.fetch("/healthz")
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const other = await app.fetch("/healthz")
    expect(other.headers.get("x-request-id")).not.toBe(generated.headers.get("x-request-id"))
    const malformed = await app.fetch("/healthz", { headers: { "x-request-id": "bad id\twith spaces" } })
    expect(malformed.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("GET /metrics: Prometheus text with request counts and latency histograms by route template and status", async () => {
    await app.fetch("/api/public/v1/brands/acme", { headers: bearer(key) })
    await app.fetch("/api/public/v1/brands/nope", { headers: bearer(key) })
    const response = await app.fetch("/metrics")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/plain")
    const text = await response.text()
    expect(text).toContain(`aiv_http_requests_total{method="GET",route="/api/public/v1/brands/:slug",status="200"}`)
    expect(text).toContain(`aiv_http_requests_total{method="GET",route="/api/public/v1/brands/:slug",status="404"}`)
    expect(text).toMatch(/aiv_http_request_duration_seconds_bucket\{method="GET",route="\/api\/public\/v1\/brands",status="200",le="\+Inf"\} \d+/)
    expect(text).toContain(`route="(unmatched)",status="404"`)
    expect(text).toContain("# TYPE aiv_http_request_duration_seconds histogram")
    expect(text).toMatch(/aiv_spool_depth \d+/)
    expect(text).toContain("aiv_ingest_records_accepted_total")
    // Concrete slugs never become label values (bounded cardinality), and no secret is in there.
    expect(text).not.toContain("/brands/acme")
    expect(text).not.toContain(key)
  })

  it("GET /readyz: 200 when the database answers and every migration is applied; 503 during an outage; /healthz keeps its contract", async () => {
    const ready = await app.fetch("/readyz")
    expect(ready.status).toBe(200)
    const body = (await ready.json()) as { status: string; checks: Record<string, string> }
    expect(body.status).toBe("ready")
    expect(body.checks).toEqual({ database: "ok", migrations: "ok", spool: "ok", shutdown: "ok" })
    expect(await (await app.fetch("/healthz")).json()).toEqual({ status: "ok", database: "pglite" })
    gate.mode = "down"
    try {
      const notReady = await app.fetch("/readyz")
      expect(notReady.status).toBe(503)
      const failed = (await notReady.json()) as { error: string; checks: Record<string, string> }
      expect(failed.error).toBe("not ready")
      expect(failed.checks.database).toBe("unreachable")
    } finally {
      gate.mode = "up"
    }
  })

  it("a 500 carries no stack trace and no message of the defect", async () => {
    gate.mode = "bug"
    let response: Response
    try {
      response = await app.fetch("/api/v1/me/api-keys", { headers: { cookie: "aiv_session=whatever" } })
    } finally {
      gate.mode = "up"
    }
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).toBe(`{"error":"internal error"}`)
    expectSecurityHeaders(response)
  })
})

describe("secrets", () => {
  it("the configuration summary never shows the database URL, the Redis URL or the metrics token", () => {
    const config = Effect.runSync(Effect.provide(AppConfig, appConfigTest({
      databaseUrl: Option.some(Redacted.make("postgres://app:hunter2-db@db.internal/aiv")),
      redisUrl: Option.some(Redacted.make("redis://:hunter2-redis@cache.internal:6379")),
      metricsToken: Option.some(Redacted.make("hunter2-metrics"))
    })))
    const dump = JSON.stringify(configSummary(config))
    expect(dump).not.toContain("hunter2")
    expect(dump).toContain("redacted")
    // Printing the config object itself does not reveal them either.
    expect(JSON.stringify(config)).not.toContain("hunter2")
    expect(String(config.databaseUrl)).not.toContain("hunter2")
  })

  it("secret comparison is by digest, in constant time, and exact", () => {
    expect(secretEquals("s3cret", "s3cret")).toBe(true)
    expect(secretEquals("s3cret", "s3cret ")).toBe(false)
    expect(secretEquals("", "s3cret")).toBe(false)
  })
})
