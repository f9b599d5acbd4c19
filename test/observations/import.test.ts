import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect } from "effect"
import { Brands } from "../../src/brands/Brands.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import { Observations } from "../../src/observations/Observations.js"
import { createBrand, databaseBackends, json, makeTestApp, signup, type Backend, type TestApp } from "../helpers/app.js"
import { makeServiceRuntime, query, type ServiceRuntime } from "../visibility/runtime.js"

const obs = (i: number, extra: Record<string, unknown> = {}) => ({
  prompt: i % 2 === 0 ? "best crm for startups" : "crm pricing",
  engine: "perplexity",
  region: "US",
  language: "en",
  observed_at: new Date(Date.UTC(2026, 0, 1, 8, 0, i)).toISOString(),
  response: `Acme is an excellent CRM. Globex is also fine. Number ${i}.`,
  citations: ["https://www.acme.com/pricing", "https://reddit.com/r/crm"],
  fanouts: [{ sub_question: "top crm tools 2026", citations: ["https://g2.com/crm"] }],
  ...extra
})

const backends: ReadonlyArray<Backend> = ["fake", ...databaseBackends()]

for (const backend of backends) {
  describe(`POST /api/v1/me/brands/{slug}/observations on ${backend}`, () => {
    let app: TestApp
    let cookie: string
    beforeAll(async () => {
      app = await makeTestApp(backend)
      cookie = await signup(app, "importer@acme.test")
      await createBrand(app, cookie, "acme")
      const competitor = await app.fetch("/api/v1/me/brands/acme/competitors", {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ name: "Globex", domain: "globex.com" })
      })
      expect(competitor.status).toBe(201)
    })
    afterAll(() => app.dispose())

    const post = (body: string | Uint8Array, slug = "acme", headers: Record<string, string> = { cookie, "content-type": "application/json" }) =>
      app.fetch(`/api/v1/me/brands/${slug}/observations`, { method: "POST", headers, body: body as BodyInit })

    it("imports a JSON array and answers {imported, skipped, errors}", async () => {
      const response = await post(JSON.stringify([obs(0), obs(1), obs(2)]))
      expect(response.status).toBe(200)
      expect(await json(response)).toEqual({ imported: 3, skipped: 0, errors: [] })
    })

    it("is idempotent: the same observations again are skipped", async () => {
      const response = await post(JSON.stringify([obs(0), obs(1), obs(2), obs(3)]))
      expect(await json(response)).toEqual({ imported: 1, skipped: 3, errors: [] })
    })

    it("NDJSON with error lines: each bad line is reported with its line number", async () => {
      const lines = [
        JSON.stringify(obs(10)),
        "",
        "{not json",
        JSON.stringify(obs(11, { engine: "bing" })),
        JSON.stringify(obs(12, { observed_at: "yesterday" })),
        JSON.stringify(obs(13, { citations: ["https://ok.com", "nope"] })),
        JSON.stringify(obs(14, { prompt: "" })),
        JSON.stringify(obs(10)), // repeated in the same body
        JSON.stringify(obs(15, { region: "USA" })),
        "[1]",
        JSON.stringify(obs(16, { response: 5 }))
      ].join("\n")
      const response = await post(lines)
      expect(response.status).toBe(200)
      const body = (await json(response)) as { imported: number; skipped: number; errors: Array<{ line: number; error: string }> }
      expect(body.imported).toBe(1)
      expect(body.skipped).toBe(1)
      expect(body.errors).toEqual([
        { line: 3, error: "invalid JSON" },
        { line: 4, error: "invalid engine: must be one of chatgpt, perplexity, gemini, claude, copilot, grok, deepseek, ai_overview, ai_mode" },
        { line: 5, error: "invalid observed_at: must be an ISO 8601 date-time with a time zone" },
        { line: 6, error: "invalid citations[1]: not an http(s) URL" },
        { line: 7, error: "prompt required" },
        { line: 9, error: "invalid region: must be an ISO-3166-1 alpha-2 code" },
        { line: 10, error: "not a JSON object" },
        { line: 11, error: "response required" }
      ])
    })

    it("region and language default to the brand's; gzip bodies are accepted", async () => {
      const { region: _r, language: _l, ...bare } = obs(20)
      const response = await post(Bun.gzipSync(new TextEncoder().encode(JSON.stringify([bare]))))
      expect(await json(response)).toEqual({ imported: 1, skipped: 0, errors: [] })
      const again = await post(JSON.stringify([{ ...bare, region: "us", language: "EN" }]))
      expect(await json(again)).toEqual({ imported: 0, skipped: 1, errors: [] })
    })

    it("413 above 5,000 observations, 400 for a body that is not JSON, 404 for another slug, 401 without a session", async () => {
      const many = Array.from({ length: 5001 }, (_, i) => JSON.stringify(obs(i))).join("\n")
      const tooMany = await post(many)
      expect(tooMany.status).toBe(413)
      expect(await json(tooMany)).toEqual({ error: "at most 5000 observations per request" })
      const bad = await post("[1, 2")
      expect(bad.status).toBe(400)
      expect(await json(bad)).toEqual({ error: "invalid JSON body" })
      const empty = await post("  ")
      expect(empty.status).toBe(400)
      const missing = await post(JSON.stringify([obs(0)]), "nope")
      expect(missing.status).toBe(404)
      expect(await json(missing)).toEqual({ error: "brand not found" })
      const anonymous = await post(JSON.stringify([obs(0)]), "acme", { "content-type": "application/json" })
      expect(anonymous.status).toBe(401)
    })

    it("an unknown prompt beyond the plan's prompt cap is an error line, not a failure", async () => {
      // free plan: 10 monitored prompts; 2 exist.
      const records = Array.from({ length: 10 }, (_, i) => obs(100 + i, { prompt: `new prompt ${i}` }))
      const body = (await json(await post(JSON.stringify(records)))) as { imported: number; errors: Array<{ line: number; error: string }> }
      expect(body.imported).toBe(8)
      expect(body.errors.map((e) => e.line)).toEqual([9, 10])
      expect(body.errors[0]!.error).toContain("cap of 10 monitored prompts")
    })
  })
}

for (const backend of databaseBackends()) {
  describe(`stored analysis on ${backend}`, () => {
    let rt: ServiceRuntime
    beforeAll(async () => {
      rt = await makeServiceRuntime(backend)
    })
    afterAll(() => rt.dispose())

    it("stores observations, mentions, citations, fan-outs and rollups once", async () => {
      const result = await rt.runPromise(
        Effect.gen(function*() {
          const accounts = yield* Accounts
          const brands = yield* Brands
          const observations = yield* Observations
          yield* accounts.signup({ email: "stored@acme.test", password: "correct horse battery", account_name: "S" })
          const me = yield* query<{ id: number }>("select id::int as id from accounts")
          const accountId = me[0]!.id
          yield* brands.create(accountId, { brand_slug: "acme", brand_name: "Acme", domain: "acme.com", vertical: "saas" })
          yield* brands.addCompetitor(accountId, "acme", { name: "Globex", domain: "globex.com", aliases: ["GBX"] })
          const records = [obs(0), obs(1), obs(2, { engine: "chatgpt", response: "Nothing relevant.", citations: ["https://globex.com/a"] })]
            .map((value, i) => ({ line: i + 1, value }))
          const first = yield* observations.importRecords(accountId, "acme", records)
          const second = yield* observations.importRecords(accountId, "acme", records)
          return { first, second }
        })
      )
      expect(result.first).toEqual({ imported: 3, skipped: 0, errors: [] })
      expect(result.second).toEqual({ imported: 0, skipped: 3, errors: [] })
      const rows = await rt.runPromise(
        Effect.all({
          observations: query<{ engine: string; brand_mentioned: boolean; brand_rank: number | null; brand_cited: boolean; day: string }>(
            "select engine, brand_mentioned, brand_rank, brand_cited, to_char(day, 'YYYY-MM-DD') as day from observations order by observed_at"
          ),
          mentions: query<{ entity: string; rank: number; sentiment_label: string; snippet: string; cited_url: string | null; via_citation_only: boolean }>(
            "select entity, rank, sentiment_label, snippet, cited_url, via_citation_only from mentions order by observed_at, rank"
          ),
          citations: query<{ domain: string; bucket: string }>("select domain, bucket from citations order by observation_id, position"),
          fanouts: query<{ n: number }>("select count(*)::int as n from fanouts"),
          fanoutCitations: query<{ domain: string; bucket: string }>("select domain, bucket from fanout_citations"),
          daily: query<{ engine: string; responses: number; brand_mentions: number; brand_cited: number; citations: number }>(
            "select engine, responses, brand_mentions, brand_cited, citations from observation_daily order by engine"
          ),
          entityDaily: query<{ engine: string; entity_id: number; mentions: number; rank_sum: number; positive: number }>(
            "select engine, entity_id, mentions, rank_sum, positive from mention_daily order by engine, entity_id"
          ),
          domainDaily: query<{ domain: string; citations: number }>(
            "select domain, sum(citations)::int as citations from citation_daily group by domain order by domain"
          )
        })
      )
      expect(rows.observations).toEqual([
        { engine: "perplexity", brand_mentioned: true, brand_rank: 1, brand_cited: true, day: "2026-01-01" },
        { engine: "perplexity", brand_mentioned: true, brand_rank: 1, brand_cited: true, day: "2026-01-01" },
        { engine: "chatgpt", brand_mentioned: false, brand_rank: null, brand_cited: false, day: "2026-01-01" }
      ])
      expect(rows.mentions).toEqual([
        { entity: "Acme", rank: 1, sentiment_label: "positive", snippet: "Acme is an excellent CRM.", cited_url: "https://www.acme.com/pricing", via_citation_only: false },
        { entity: "Globex", rank: 2, sentiment_label: "positive", snippet: "Globex is also fine.", cited_url: null, via_citation_only: false },
        { entity: "Acme", rank: 1, sentiment_label: "positive", snippet: "Acme is an excellent CRM.", cited_url: "https://www.acme.com/pricing", via_citation_only: false },
        { entity: "Globex", rank: 2, sentiment_label: "positive", snippet: "Globex is also fine.", cited_url: null, via_citation_only: false },
        { entity: "Globex", rank: 1, sentiment_label: "neutral", snippet: "", cited_url: "https://globex.com/a", via_citation_only: true }
      ])
      expect(rows.citations).toEqual([
        { domain: "acme.com", bucket: "owned" },
        { domain: "reddit.com", bucket: "ugc" },
        { domain: "acme.com", bucket: "owned" },
        { domain: "reddit.com", bucket: "ugc" },
        { domain: "globex.com", bucket: "competitor" }
      ])
      expect(rows.fanouts[0]!.n).toBe(3)
      expect(rows.fanoutCitations.every((c) => c.domain === "g2.com" && c.bucket === "earned")).toBe(true)
      expect(rows.daily).toEqual([
        { engine: "chatgpt", responses: 1, brand_mentions: 0, brand_cited: 0, citations: 1 },
        { engine: "perplexity", responses: 2, brand_mentions: 2, brand_cited: 2, citations: 4 }
      ])
      const competitorId = rows.entityDaily.find((r) => r.entity_id !== 0)!.entity_id
      expect(rows.entityDaily).toEqual([
        { engine: "chatgpt", entity_id: competitorId, mentions: 1, rank_sum: 1, positive: 0 },
        { engine: "perplexity", entity_id: 0, mentions: 2, rank_sum: 2, positive: 2 },
        { engine: "perplexity", entity_id: competitorId, mentions: 2, rank_sum: 4, positive: 2 }
      ])
      expect(rows.domainDaily).toEqual([
        { domain: "acme.com", citations: 2 },
        { domain: "globex.com", citations: 1 },
        { domain: "reddit.com", citations: 2 }
      ])
    })
  })
}
