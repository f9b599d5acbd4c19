import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Layer } from "effect"
import { PublicApi } from "../../src/api.js"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { query } from "./runtime.js"

/**
 * The interval fields of the visibility reads (docs/visibility.md, "Intervals") on a fixture imported
 * through the app, every value computed by hand outside this repository's code (the formulas applied
 * observation by observation, not through the sums the service uses), rounded to 4 decimals on 0..1
 * and to 2 on the 0..100 scores.
 *
 * "Now" is 2026-03-15T12:00:00Z: 7d = 03-09..03-15, previous period 03-02..03-08. Brand acme (US/en,
 * competitors Globex and Initech) and bolt (no observation at all). Every observation is US/en:
 *
 *   this period                                      previous period
 *   chatgpt    03-15  10: all Acme, the first 5 also  chatgpt    03-05  10: 4 Globex, 1 Globex + Initech,
 *                     Globex; the first 3 cite               5 nothing
 *                     acme.com
 *   gemini     03-14  4: 2 nothing, 2 Globex          perplexity 03-06  2: Acme, nothing
 *   perplexity 03-13  2: Acme + Globex + Initech,     claude     03-04  1: Acme + Initech
 *                     nothing
 *   copilot    03-12  1: Acme
 *
 * Wilson(k, n): center = (p + z²/2n)/(1 + z²/n), half = z/(1 + z²/n)·sqrt(p(1−p)/n + z²/4n²), z = 1.959964.
 */

const NOW = new Date("2026-03-15T12:00:00Z")

const text: Record<string, string> = {
  "": "No vendor fits this question well.",
  A: "Acme is a solid choice.",
  G: "Globex is a solid choice.",
  AG: "Acme is a solid choice, and Globex too.",
  GI: "Globex is a solid choice, and Initech too.",
  AI: "Acme is a solid choice, and Initech too.",
  AGI: "Acme is a solid choice, then Globex, then Initech."
}

const observation = (engine: string, day: string, i: number, who: string, citations: ReadonlyArray<string> = []) => ({
  prompt: "best crm",
  engine,
  region: "US",
  language: "en",
  observed_at: `2026-03-${day}T08:${String(i).padStart(2, "0")}:00Z`,
  response: text[who],
  citations,
  fanouts: []
})

const FIXTURE = [
  ...Array.from({ length: 10 }, (_, i) =>
    observation("chatgpt", "15", i, i < 5 ? "AG" : "A", i < 3 ? ["https://acme.com/x"] : ["https://reddit.com/r/x"])),
  ...Array.from({ length: 4 }, (_, i) => observation("gemini", "14", i, i < 2 ? "" : "G")),
  observation("perplexity", "13", 0, "AGI"),
  observation("perplexity", "13", 1, ""),
  observation("copilot", "12", 0, "A"),
  ...Array.from({ length: 10 }, (_, i) => observation("chatgpt", "05", i, i < 4 ? "G" : i === 4 ? "GI" : "")),
  observation("perplexity", "06", 0, "A"),
  observation("perplexity", "06", 1, ""),
  observation("claude", "04", 0, "AI")
]

for (const backend of databaseBackends()) {
  describe(`interval fields on ${backend}`, () => {
    let app: TestApp
    let key: string

    beforeAll(async () => {
      app = await makeTestApp(backend, { now: NOW })
      const cookie = await signup(app, "intervals@acme.test")
      await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail("intervals@acme.test", "growth")))
      key = (await createKey(app, cookie)).key
      await createBrand(app, cookie, "acme", { brand_name: "Acme", domain: "acme.com" })
      await createBrand(app, cookie, "bolt", { brand_name: "Bolt", domain: "bolt.io" })
      const post = (path: string, body: unknown) =>
        app.fetch(path, { method: "POST", headers: { "content-type": "application/json", cookie }, body: JSON.stringify(body) })
      for (const [name, domain] of [["Globex", "globex.com"], ["Initech", "initech.com"]]) {
        expect((await post("/api/v1/me/brands/acme/competitors", { name, domain })).status).toBe(201)
      }
      const imported = await post("/api/v1/me/brands/acme/observations", FIXTURE)
      expect(await json(imported)).toEqual({ imported: FIXTURE.length, skipped: 0, errors: [] })
    }, 60_000)
    afterAll(() => app.dispose())

    const ok = async (path: string) => {
      const response = await app.fetch(`/api/public/v1${path}`, { headers: bearer(key) })
      const body = (await json(response)) as any
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`)
      return body
    }

    it("/snapshots: mention and citation rates with Wilson intervals per day and per engine (p = 0, p = 1, n = 1)", async () => {
      const body = await ok("/brands/acme/snapshots?range=7d")
      const pick = (s: any) => ({
        date: s.date,
        mention_rate: s.mention_rate,
        mention_rate_ci95: s.mention_rate_ci95,
        citation_rate_ci95: s.citation_rate_ci95,
        per_engine_n: s.per_engine_n,
        per_engine_ci95: s.per_engine_ci95
      })
      expect(body.snapshots.map(pick)).toEqual([
        // copilot 1/1: Wilson(1, 1) = [0.2065, 1]; no citation 0/1 = [0, 0.7935].
        {
          date: "2026-03-12", mention_rate: 1, mention_rate_ci95: [0.2065, 1], citation_rate_ci95: [0, 0.7935],
          per_engine_n: { copilot: 1 }, per_engine_ci95: { copilot: [0.2065, 1] }
        },
        // perplexity 1/2: [0.0945, 0.9055]; citations 0/2: [0, 0.6576].
        {
          date: "2026-03-13", mention_rate: 0.5, mention_rate_ci95: [0.0945, 0.9055], citation_rate_ci95: [0, 0.6576],
          per_engine_n: { perplexity: 2 }, per_engine_ci95: { perplexity: [0.0945, 0.9055] }
        },
        // gemini 0/4 (p = 0): [0, 0.4899].
        {
          date: "2026-03-14", mention_rate: 0, mention_rate_ci95: [0, 0.4899], citation_rate_ci95: [0, 0.4899],
          per_engine_n: { gemini: 4 }, per_engine_ci95: { gemini: [0, 0.4899] }
        },
        // chatgpt 10/10 (p = 1): [0.7225, 1]; 3 of 10 cite acme.com: [0.1078, 0.6032].
        {
          date: "2026-03-15", mention_rate: 1, mention_rate_ci95: [0.7225, 1], citation_rate_ci95: [0.1078, 0.6032],
          per_engine_n: { chatgpt: 10 }, per_engine_ci95: { chatgpt: [0.7225, 1] }
        }
      ])
    })

    it("/model: n, score_ci95 (Wilson × 100), delta_ci95 (Newcombe × 100), significant", async () => {
      const body = await ok("/model?brand=acme&range=7d")
      const row = (engine: string) => body.engines.find((e: any) => e.engine === engine)
      // chatgpt 10/10 against 0/10: delta 100, Newcombe [60.75, 100]: significant.
      expect(row("chatgpt")).toEqual({
        engine: "chatgpt", score: 100, delta: 100, n: 10, score_ci95: [72.25, 100], delta_ci95: [60.75, 100], significant: true
      })
      // perplexity 1/2 against 1/2: delta 0, [−57.34, 57.34]: not significant.
      expect(row("perplexity")).toEqual({
        engine: "perplexity", score: 50, delta: 0, n: 2, score_ci95: [9.45, 90.55], delta_ci95: [-57.34, 57.34], significant: false
      })
      // gemini 0/4 (p = 0), nothing before: no delta interval.
      expect(row("gemini")).toEqual({
        engine: "gemini", score: 0, delta: 0, n: 4, score_ci95: [0, 48.99], delta_ci95: null, significant: false
      })
      expect(row("copilot")).toEqual({
        engine: "copilot", score: 100, delta: 100, n: 1, score_ci95: [20.65, 100], delta_ci95: null, significant: false
      })
      // claude: only in the previous period: n = 0, no interval at all.
      expect(row("claude")).toEqual({
        engine: "claude", score: 0, delta: -100, n: 0, score_ci95: null, delta_ci95: null, significant: false
      })
    })

    it("/portfolio: n and ai_presence_score_ci95; a brand without observations has n = 0 and null", async () => {
      const body = await ok("/portfolio?range=7d")
      // acme: 12 of 17 observations mention it: 70.6, Wilson [46.87, 86.72].
      expect(body.brands.map((b: any) => [b.slug, b.ai_presence_score, b.n, b.ai_presence_score_ci95])).toEqual([
        ["acme", 70.6, 17, [46.87, 86.72]],
        ["bolt", 0, 0, null]
      ])
    })

    it("/industry/metrics: own n, mention_rate and its interval; share intervals and significance per entity", async () => {
      const body = await ok("/industry/metrics?range=7d")
      expect(body.own).toEqual({ total_mentions: 12, total_responses: 17, avg_position: 1, n: 17, mention_rate: 12 / 17, mention_rate_ci95: [0.4687, 0.8672] })
      // This period: 17 observations, Σm = 21 (Acme 12, Globex 8, Initech 1); before: 13, Σm = 9 (Acme 2, Globex 5, Initech 2).
      // Acme 12/21 − 2/9 = 0.3492 [0.0506, 0.6478]: significant; Globex 8/21 − 5/9 [−0.5467, 0.1975] and
      // Initech 1/21 − 2/9 [−0.4022, 0.053]: not.
      const pick = (r: any) => [r.name, r.mentions, r.share_ci95, r.delta_ci95, r.significant]
      expect(body.ranking.map(pick)).toEqual([
        ["Acme", 12, [0.4234, 0.7194], [0.0506, 0.6478], true],
        ["Globex", 8, [0.2469, 0.515], [-0.5467, 0.1975], false],
        ["Initech", 1, [0, 0.1336], [-0.4022, 0.053], false]
      ])
      expect(body.ranking[0].share).toBeCloseTo(12 / 21, 12)
      expect(body.ranking[0].delta).toBeCloseTo(12 / 21 - 2 / 9, 12)
      // /industry/ranking (every region and engine) reads the same population here.
      const ranking = await ok("/industry/ranking?range=7d")
      expect(ranking.ranking.map(pick)).toEqual(body.ranking.map(pick))
      // The topic filter reads the per-prompt rollups (prompt_daily, prompt_entity_daily): the one prompt's topic.
      const topic = (await ok("/brands/acme/prompts")).prompts[0].topic
      const byTopic = await ok(`/industry/ranking?range=7d&topic=${encodeURIComponent(topic)}`)
      expect(byTopic.ranking.map(pick)).toEqual(body.ranking.map(pick))
    })

    it("shares need 2 observations: copilot alone (n = 1) has no share interval; n = 0 has no rows", async () => {
      const copilot = await ok("/industry/metrics?range=7d&engine=copilot")
      expect(copilot.own).toMatchObject({ n: 1, mention_rate: 1, mention_rate_ci95: [0.2065, 1] })
      expect(copilot.ranking.map((r: any) => [r.name, r.share, r.share_ci95, r.delta_ci95, r.significant])).toEqual([
        ["Acme", 1, null, null, false],
        ["Globex", 0, null, null, false],
        ["Initech", 0, null, null, false]
      ])
      const none = await ok("/industry/metrics?range=7d&engine=deepseek")
      expect(none.own).toMatchObject({ n: 0, mention_rate: 0, mention_rate_ci95: null })
      expect(none.ranking).toEqual([])
    })

    it("the OpenAPI document, the typed client and the MCP tools carry the interval fields", async () => {
      const openapi = (await json(await app.fetch("/api/public/v1/openapi.json"))) as any
      const schemas = openapi.components.schemas
      expect(Object.keys(schemas.EnginePerformance.properties)).toEqual(
        expect.arrayContaining(["n", "score_ci95", "delta_ci95", "significant"])
      )
      expect(Object.keys(schemas.IndustryRankingRow.properties)).toEqual(expect.arrayContaining(["share_ci95", "delta_ci95", "significant"]))
      expect(Object.keys(schemas.PortfolioEntry.properties)).toEqual(expect.arrayContaining(["n", "ai_presence_score_ci95"]))
      expect(Object.keys(schemas.Snapshot.properties)).toEqual(
        expect.arrayContaining(["mention_rate", "mention_rate_ci95", "citation_rate_ci95", "per_engine_n", "per_engine_ci95"])
      )
      // The API reference says what an interval means, on the fields and on the endpoints.
      const meaning = "from one asking to the next on the same monitored prompts and engines"
      expect(JSON.stringify(schemas.IndustryRankingRow.properties.share_ci95)).toContain(meaning)
      expect(JSON.stringify(schemas.EnginePerformance.properties.score_ci95)).toContain(meaning)
      expect(openapi.paths["/api/public/v1/model"].get.description).toContain("not how other prompts would fare")
      const page = await (await app.fetch("/api/public/v1/docs")).text()
      expect(page).toContain("answer-to-answer variation")
      const inProcessFetch = Layer.succeed(FetchHttpClient.Fetch, ((input: RequestInfo | URL, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : input.toString())
        return app.fetch(url.pathname + url.search, init)
      }) as typeof fetch)
      const model = await Effect.runPromise(
        HttpApiClient.make(PublicApi, {
          baseUrl: "http://localhost",
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(key))
        }).pipe(
          Effect.flatMap((client) => client.visibility.model({ urlParams: { brand: "acme", range: "7d" } })),
          Effect.provide(FetchHttpClient.layer),
          Effect.provide(inProcessFetch)
        )
      )
      expect(model.engines.find((e) => e.engine === "chatgpt")).toMatchObject({ n: 10, score_ci95: [72.25, 100], significant: true })
      const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
        fetch: (input: string | URL | Request, init?: RequestInit) => {
          const url = new URL(input instanceof Request ? input.url : input.toString())
          return app.fetch(url.pathname + url.search, init)
        },
        requestInit: { headers: bearer(key) }
      })
      const mcp = new Client({ name: "intervals-test", version: "1.0.0" })
      await mcp.connect(transport)
      const tool = await mcp.callTool({ name: "get_industry_ranking", arguments: { range: "7d" } })
      expect((tool.structuredContent as any).ranking[0]).toMatchObject({ name: "Acme", share_ci95: [0.4234, 0.7194], significant: true })
      await mcp.close()
    })

    it("the backfill of migrations/0012 equals the write-time sums", async () => {
      const run = (sql: string) => app.run(query<Record<string, unknown>>(sql) as unknown as Effect.Effect<ReadonlyArray<Record<string, unknown>>>)
      const snapshot = () =>
        Promise.all([
          run("select brand_id, day, engine, region, language, entity_mentions, entity_mentions_sq from observation_daily order by 1, 2, 3, 4, 5"),
          run("select brand_id, day, engine, region, language, entity_id, co_mentions from mention_daily order by 1, 2, 3, 4, 5, 6"),
          run("select brand_id, day, prompt_id, entity_mentions, entity_mentions_sq from prompt_daily order by 1, 2, 3"),
          run("select brand_id, entity_id, day, prompt_id, co_mentions from prompt_entity_daily order by 1, 2, 3, 4")
        ]).then((tables) => JSON.stringify(tables))
      const live = await snapshot()
      expect(live).toContain("\"entity_mentions_sq\":9") // the perplexity day: 3² + 0²
      await run("update observation_daily set entity_mentions = 0, entity_mentions_sq = 0")
      await run("update mention_daily set co_mentions = 0")
      await run("update prompt_daily set entity_mentions = 0, entity_mentions_sq = 0")
      await run("update prompt_entity_daily set co_mentions = 0")
      const migration = await Bun.file(new URL("../../migrations/0012_answer_engines.sql", import.meta.url)).text()
      await run(migration.slice(migration.indexOf("-- Backfill"), migration.indexOf("-- End of the backfill")))
      expect(await snapshot()).toBe(live)
    })

    it("the backfill of migrations/0024 equals the write-time counts of observations naming an entity", async () => {
      const run = (sql: string) => app.run(query<Record<string, unknown>>(sql) as unknown as Effect.Effect<ReadonlyArray<Record<string, unknown>>>)
      const snapshot = () =>
        Promise.all([
          run("select brand_id, day, engine, region, language, entity_observations from observation_daily order by 1, 2, 3, 4, 5"),
          run("select brand_id, day, prompt_id, entity_observations from prompt_daily order by 1, 2, 3")
        ]).then((tables) => JSON.stringify(tables))
      const live = await snapshot()
      // The perplexity day: two observations, one naming 3 entities, one none.
      expect(live).toContain("\"entity_observations\":1")
      await run("update observation_daily set entity_observations = 0")
      await run("update prompt_daily set entity_observations = 0")
      const migration = await Bun.file(new URL("../../migrations/0024_real_answers.sql", import.meta.url)).text()
      await run(migration.slice(migration.indexOf("-- Backfill"), migration.indexOf("-- End of the backfill")))
      expect(await snapshot()).toBe(live)
    })
  })
}
