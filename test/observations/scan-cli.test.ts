import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { ConfigProvider, Effect, Layer } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { Brands } from "../../src/brands/Brands.js"
import { scanCommand } from "../../src/observations/cli.js"
import { AnswerEnginesLive } from "../../src/observations/Engines.js"
import { ScannerConfig, scannerSettingsFromEnv } from "../../src/observations/Scanner.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import { databaseBackends } from "../helpers/app.js"
import { makeServiceRuntime, query, type ServiceRuntime } from "../visibility/runtime.js"

/**
 * `bun run cli scan` (its command, on the services of a database back end) against a local fake of
 * every provider, configured through the environment exactly as the README says: every engine stores
 * its samples, a provider answering 401 is recorded as failed with its reason (and skipped for the
 * rest of the cycle), tokens are stored per observation and counted against the monthly budget.
 */

import { fixture, localHttpClient, redirectResponse } from "./providers.js"

let server: ReturnType<typeof Bun.serve>
const calls: Record<string, number> = {}

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      // Gemini's grounding redirects, kept on this machine (./providers.ts).
      const redirect = redirectResponse(url)
      if (redirect !== null) return redirect
      const route = url.pathname.split("/")[1]!
      calls[route] = (calls[route] ?? 0) + 1
      switch (route) {
        case "openai":
          return Response.json(await fixture(url.pathname.endsWith("/responses") ? "openai-responses" : "openai-chat"))
        case "anthropic":
          return Response.json(await fixture("anthropic"))
        case "gemini":
          return Response.json(await fixture("gemini"))
        case "perplexity":
          return Response.json(await fixture("perplexity"))
        case "xai":
          return Response.json(await fixture("xai"))
        case "serpapi": {
          const engine = url.searchParams.get("engine")
          if (engine === "google") return Response.json({ ai_overview: { page_token: "t1" } })
          return Response.json(await fixture(engine === "google_ai_overview" ? "serp-ai-overview" : "serp"))
        }
        case "denied":
          return Response.json({ error: { message: "invalid api key" } }, { status: 401 })
      }
      return new Response("not found", { status: 404 })
    }
  })
})
afterAll(() => server.stop(true))

const environment = (extra: Record<string, string> = {}) => {
  const base = `http://127.0.0.1:${server.port}`
  const env: Record<string, string> = {
    ENGINE_CHATGPT_PROTOCOL: "openai-responses", ENGINE_CHATGPT_URL: `${base}/openai/v1`, ENGINE_CHATGPT_MODEL: "gpt-test", ENGINE_CHATGPT_API_KEY: "k1",
    ENGINE_DEEPSEEK_PROTOCOL: "openai-chat", ENGINE_DEEPSEEK_URL: `${base}/openai`, ENGINE_DEEPSEEK_MODEL: "deepseek-chat", ENGINE_DEEPSEEK_API_KEY: "k2",
    ENGINE_CLAUDE_PROTOCOL: "anthropic", ENGINE_CLAUDE_URL: `${base}/anthropic/v1`, ENGINE_CLAUDE_MODEL: "claude-test", ENGINE_CLAUDE_API_KEY: "k3",
    ENGINE_GEMINI_PROTOCOL: "gemini", ENGINE_GEMINI_URL: `${base}/gemini/v1beta`, ENGINE_GEMINI_MODEL: "gemini-test", ENGINE_GEMINI_API_KEY: "k4",
    ENGINE_PERPLEXITY_URL: `${base}/perplexity`, ENGINE_PERPLEXITY_MODEL: "sonar", ENGINE_PERPLEXITY_API_KEY: "k5",
    ENGINE_GROK_PROTOCOL: "xai", ENGINE_GROK_URL: `${base}/xai/v1`, ENGINE_GROK_MODEL: "grok-test", ENGINE_GROK_API_KEY: "k6",
    ENGINE_AI_MODE_PROTOCOL: "serp", ENGINE_AI_MODE_PROVIDER: "serpapi", ENGINE_AI_MODE_URL: `${base}/serpapi`, ENGINE_AI_MODE_MODEL: "google_ai_mode", ENGINE_AI_MODE_API_KEY: "k7",
    ENGINE_AI_OVERVIEW_PROTOCOL: "serp", ENGINE_AI_OVERVIEW_URL: `${base}/serpapi`, ENGINE_AI_OVERVIEW_MODEL: "google_ai_overview", ENGINE_AI_OVERVIEW_API_KEY: "k7",
    ENGINE_COPILOT_PROTOCOL: "serp", ENGINE_COPILOT_URL: `${base}/denied`, ENGINE_COPILOT_MODEL: "bing_copilot", ENGINE_COPILOT_API_KEY: "wrong",
    ENGINE_RETRIES: "1", ENGINE_RETRY_BASE_MS: "10", SCAN_SAMPLES: "2", SCANNER_PROVIDER_CONCURRENCY: "1",
    ...extra
  }
  return ConfigProvider.fromMap(new Map(Object.entries(env)))
}

/** cli.ts's scanEnvironmentLive, with an HttpClient that never leaves the machine. */
const scanEnvironment = Layer.merge(
  AnswerEnginesLive.pipe(Layer.provide(localHttpClient(() => `http://127.0.0.1:${server.port}`))),
  Layer.effect(ScannerConfig, scannerSettingsFromEnv)
)

for (const backend of databaseBackends()) {
  describe(`bun run cli scan on ${backend}`, () => {
    let rt: ServiceRuntime
    let brandId = 0
    let accountId = 0
    beforeAll(async () => {
      rt = await makeServiceRuntime(backend)
      await rt.runPromise(Effect.gen(function*() {
        const email = `scan-cli${Math.random()}@acme.test`
        yield* (yield* Accounts).signup({ email, password: "correct horse battery", account_name: "Scan CLI" })
        yield* (yield* AccountsRepo).setPlanByEmail(email, "growth")
        const user = yield* (yield* AccountsRepo).findUserByEmail(email)
        accountId = user._tag === "Some" ? user.value.accountId : 0
        const brands = yield* Brands
        const brand = yield* brands.create(accountId, { brand_slug: "acme-scan", brand_name: "Acme", domain: "acme.com", vertical: "saas" })
        brandId = brand.id
        yield* brands.addCompetitor(accountId, "acme-scan", { name: "Globex", domain: "globex.com" })
        yield* brands.addPrompt(accountId, "acme-scan", { prompt: "best crm for startups" })
        yield* brands.addPrompt(accountId, "acme-scan", { prompt: "crm pricing" })
      }))
    }, 60_000)
    afterAll(() => rt.dispose())

    const scan = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
      rt.runPromise(scanCommand(args).pipe(Effect.provide(scanEnvironment), Effect.withConfigProvider(environment(extra))))

    it("stores 2 samples per prompt on every engine; the 401 provider is recorded with its reason and skipped", async () => {
      const deniedBefore = calls["denied"] ?? 0
      const failures = await scan(["--brand", "acme-scan"])
      const perEngine = await rt.runPromise(query<{ engine: string; n: number; stamps: number; tokens: number | null }>(
        `select engine, count(*)::int as n, count(distinct observed_at)::int as stamps, sum(input_tokens + output_tokens)::int as tokens
         from observations where brand_id = ${brandId} group by engine order by engine`
      ))
      // 2 prompts x 2 samples = 4 per engine, each sample its own observed_at; copilot (401) stored nothing.
      expect(perEngine.map((r) => [r.engine, r.n, r.stamps])).toEqual([
        ["ai_mode", 4, 2], ["ai_overview", 4, 2], ["chatgpt", 4, 2], ["claude", 4, 2], ["deepseek", 4, 2],
        ["gemini", 4, 2], ["grok", 4, 2], ["perplexity", 4, 2]
      ])
      // Tokens per observation as each provider reported them (SERP APIs report none).
      expect(Object.fromEntries(perEngine.map((r) => [r.engine, r.tokens]))).toEqual({
        ai_mode: null, ai_overview: null, chatgpt: 4 * 684, claude: 4 * 6970, deepseek: 4 * 1163, gemini: 4 * 317, grok: 4 * 315, perplexity: 4 * 84
      })
      const cost = await rt.runPromise(query<{ cost: number }>(`select sum(cost_usd)::float8 as cost from observations where brand_id = ${brandId}`))
      expect(cost[0]!.cost).toBeCloseTo(4 * 0.00709, 10)
      // The 401: one real call (not retried), then the other 3 calls of the cycle skipped, all recorded.
      expect(failures).toBe(4)
      expect(calls["denied"]).toBe(deniedBefore + 1)
      const status = await rt.runPromise(Effect.flatMap(ObservationsRepo, (repo) => repo.engineStatus(accountId, brandId)))
      const copilot = status.find((s) => s.engine === "copilot")!
      expect([copilot.observations, copilot.failures]).toEqual([0, 4])
      expect(copilot.lastError).toStartWith("skipped for this cycle: HTTP 401")
      expect(status.find((s) => s.engine === "chatgpt")).toMatchObject({ observations: 4, failures: 0, lastError: null, tokens: 4 * 684 })
      // Fan-outs came through (the Responses API's searches with their sources).
      const fanouts = await rt.runPromise(query<{ engine: string; sub_question: string }>(
        `select distinct engine, sub_question from fanouts where brand_id = ${brandId} order by engine, sub_question`
      ))
      expect(fanouts.filter((f) => f.engine === "chatgpt").map((f) => f.sub_question)).toEqual(["best crm for startups 2026"])
      expect(fanouts.filter((f) => f.engine === "claude").map((f) => f.sub_question)).toEqual(["acme crm pricing", "best crm for startups 2026"])
    }, 60_000)

    it("--engine limits the scan; a spent monthly token budget stops scanning and says why", async () => {
      const before = calls["perplexity"] ?? 0
      await scan(["--brand", "acme-scan", "--engine", "perplexity", "--samples", "1"])
      expect(calls["perplexity"]).toBe(before + 2)
      // Spent already this month (the first scan used far more than 100 tokens): nothing is asked.
      await scan(["--brand", "acme-scan"], { SCAN_MONTHLY_TOKEN_BUDGET: "100" })
      expect(calls["perplexity"]).toBe(before + 2)
      const status = await rt.runPromise(Effect.flatMap(ObservationsRepo, (repo) => repo.engineStatus(accountId, brandId)))
      expect(status.every((s) => s.lastError?.startsWith("monthly token budget spent") === true)).toBe(true)
    }, 60_000)

    it("refuses bad arguments and an engine that is not configured", async () => {
      await expect(scan(["--samples", "0"])).rejects.toThrow("--samples must be an integer from 1 to 20")
      await expect(scan(["--engine", "bing"])).rejects.toThrow("engine bing is not configured")
      await expect(scan(["--brand"])).rejects.toThrow("usage: bun run cli scan")
      await expect(scan(["--brand", "nope"])).rejects.toThrow("no brand with slug nope")
    })
  })
}
