import { FetchHttpClient, HttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Duration, Effect, Fiber, Layer, Option, TestClock, TestContext } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { Brands } from "../../src/brands/Brands.js"
import { answerEngines, EngineError, makeHttpEngine, type AnswerEngine } from "../../src/observations/Engines.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import { scanDue, scannerConfig, scannerLoop } from "../../src/observations/Scanner.js"
import { makeSimulatedEngine } from "../../src/observations/Simulated.js"
import { databaseBackends } from "../helpers/app.js"
import { makeServiceRuntime, query, type ServiceRuntime } from "../visibility/runtime.js"

const START = Date.parse("2026-03-01T12:00:00Z")
const HOUR = 3_600_000

/** Engines that count their calls: one answers, one always fails (retryable), one fails once then answers. */
const makeEngines = () => {
  const calls: Record<string, number> = { chatgpt: 0, perplexity: 0, gemini: 0 }
  const world = { brand: { name: "Acme", domain: "acme.com" }, competitors: [{ name: "Globex", domain: "globex.com" }] }
  const simulated = makeSimulatedEngine("chatgpt", world)
  const engines: Array<AnswerEngine> = [
    { slug: "chatgpt", ask: (q) => Effect.suspend(() => (calls.chatgpt!++, simulated.ask(q))) },
    {
      slug: "perplexity",
      ask: () => Effect.suspend(() => (calls.perplexity!++, Effect.fail(new EngineError({ engine: "perplexity", message: "HTTP 503: down", retryable: true }))))
    },
    {
      slug: "gemini",
      ask: () =>
        Effect.suspend(() =>
          calls.gemini!++ % 2 === 0
            ? Effect.fail(new EngineError({ engine: "gemini", message: "HTTP 429", retryable: true }))
            : Effect.succeed({ response: "Acme is great.", citations: ["https://acme.com/x"], fanouts: [] })
        )
    }
  ]
  return { engines, calls }
}

/** An account on the enterprise plan (a scan every 6 h) with a brand and two prompts, created at START. */
const setupBrand = (testClock: boolean) => Effect.gen(function*() {
  if (testClock) yield* TestClock.setTime(START)
  const accounts = yield* Accounts
  const brands = yield* Brands
  const email = `scan${Math.random()}@acme.test`
  yield* accounts.signup({ email, password: "correct horse battery", account_name: "Scan" })
  yield* (yield* AccountsRepo).setPlanByEmail(email, "enterprise")
  const rows = yield* query<{ id: number }>("select id::int as id from accounts order by id desc limit 1")
  const accountId = rows[0]!.id
  const brand = yield* brands.create(accountId, { brand_slug: "acme", brand_name: "Acme", domain: "acme.com", vertical: "saas" })
  yield* brands.addPrompt(accountId, "acme", { prompt: "best crm" })
  yield* brands.addPrompt(accountId, "acme", { prompt: "crm pricing" })
  return { accountId, brandId: brand.id }
})
const setup = setupBrand(true)

const observationCount = (brandId: number) =>
  Effect.map(query<{ n: number }>(`select count(*)::int as n from observations where brand_id = ${brandId}`), (r) => r[0]!.n)

/** Moves the test clock a step at a time, letting the forked fiber's real I/O run, until `done`. */
const advanceUntil = <R>(done: Effect.Effect<boolean, never, R>, step: Duration.DurationInput, maxSteps = 200) =>
  Effect.gen(function*() {
    for (let i = 0; i < maxSteps; i++) {
      if (yield* done) return true
      yield* TestClock.adjust(step)
      yield* Effect.promise(() => Bun.sleep(15))
    }
    return yield* done
  })

for (const backend of databaseBackends()) {
  describe(`scanner on ${backend} (fake engines, test clock)`, () => {
    let rt: ServiceRuntime
    beforeAll(async () => {
      rt = await makeServiceRuntime(backend)
    })
    afterAll(() => rt.dispose())

    it("scans a due brand once, retries a failing engine then records it as failed, the others go on", async () => {
      const { calls, engines } = makeEngines()
      const result = await rt.runPromise(
        Effect.gen(function*() {
          const { accountId, brandId } = yield* setup
          const repo = yield* ObservationsRepo
          const fiber = yield* Effect.fork(scannerLoop)
          // First wake-up at START: 2 prompts x (chatgpt + gemini after one retry) = 4 observations.
          const scanned = yield* advanceUntil(
            Effect.map(repo.failures(accountId, brandId), (f) => f.length === 2),
            Duration.seconds(1)
          )
          const first = yield* observationCount(brandId)
          const failures = yield* repo.failures(accountId, brandId)
          // An hour of wake-ups later: not due again (next scan in 6 h).
          yield* TestClock.adjust(Duration.hours(1))
          yield* Effect.promise(() => Bun.sleep(100))
          const afterHour = yield* observationCount(brandId)
          const callsAfterHour = { ...calls }
          const next = yield* query<{ next: Date }>(`select next_scan_at as next from brands where id = ${brandId}`)
          // 6 h after the first scan it is due again.
          yield* TestClock.adjust(Duration.hours(5))
          yield* advanceUntil(Effect.map(observationCount(brandId), (n) => n === 8), Duration.seconds(30), 400)
          const second = yield* observationCount(brandId)
          yield* Fiber.interrupt(fiber)
          return { scanned, first, failures, afterHour, callsAfterHour, next: next[0]!.next, second }
        }).pipe(
          Effect.provide(Layer.merge(answerEngines(engines), scannerConfig({ interval: Duration.minutes(10), retries: 2, retryBase: Duration.seconds(1), concurrency: 2 }))),
          Effect.provide(TestContext.TestContext)
        )
      )
      expect(result.scanned).toBe(true)
      expect(result.first).toBe(4)
      expect(result.failures.map((f) => [f.engine, f.attempts, f.error])).toEqual([
        ["perplexity", 3, "HTTP 503: down"],
        ["perplexity", 3, "HTTP 503: down"]
      ])
      expect(result.afterHour).toBe(4)
      expect(result.callsAfterHour).toEqual({ chatgpt: 2, perplexity: 6, gemini: 4 })
      expect(result.next.getTime() - START).toBe(6 * HOUR)
      expect(result.second).toBe(8)
    }, 60_000)

    it("with no engine configured, nothing is claimed", async () => {
      const report = await rt.runPromise(
        scanDue.pipe(Effect.provide(Layer.merge(answerEngines([]), scannerConfig())), Effect.provide(TestContext.TestContext))
      )
      expect(report).toEqual({ brands: 0, observations: 0, failures: 0 })
    })
  })
}

describe("scanner with the HTTP adapter against a local fake engine", () => {
  let server: ReturnType<typeof Bun.serve>
  let requests = 0
  let rt: ServiceRuntime
  beforeAll(async () => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        ++requests === 1
          ? new Response("busy", { status: 503 })
          : Response.json({ choices: [{ message: { content: "Acme leads; Globex follows." } }], citations: ["https://acme.com/a"] })
    })
    rt = await makeServiceRuntime("pglite")
  })
  afterAll(async () => {
    server.stop(true)
    await rt.dispose()
  })

  it("retries with backoff (real clock) and stores the answer", async () => {
    const report = await rt.runPromise(
      Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const engine = makeHttpEngine(
          { slug: "perplexity", protocol: "perplexity", baseUrl: `http://127.0.0.1:${server.port}`, model: "sonar", apiKey: Option.none(), timeout: Duration.seconds(5) },
          client
        )
        // Created now (real clock), so due at once.
        const { accountId, brandId } = yield* setupBrand(false)
        const report = yield* scanDue.pipe(
          Effect.provide(Layer.merge(answerEngines([engine]), scannerConfig({ retries: 2, retryBase: Duration.millis(10) })))
        )
        const failures = yield* (yield* ObservationsRepo).failures(accountId, brandId)
        const mentions = yield* query<{ entity: string; rank: number }>(
          `select entity, rank from mentions where brand_id = ${brandId} order by observation_id, rank`
        )
        return { report, failures, mentions }
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(report.report).toEqual({ brands: 1, observations: 2, failures: 0 })
    expect(report.failures).toEqual([])
    expect(requests).toBe(3)
    expect(report.mentions).toEqual([
      { entity: "Acme", rank: 1 },
      { entity: "Acme", rank: 1 }
    ])
  }, 60_000)
})
