import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { scanCommand } from "../../src/observations/cli.js"
import { AnswerEnginesLive } from "../../src/observations/Engines.js"
import { ObservationsRepo } from "../../src/observations/Repo.js"
import { ScannerConfig, scannerSettingsFromEnv } from "../../src/observations/Scanner.js"
import { bearer, createBrand, createKey, databaseBackends, json, makeTestApp, signup, type TestApp } from "../helpers/app.js"
import { fixture, localHttpClient, redirectResponse } from "./providers.js"

/**
 * "Reading real answers" (docs/observations.md), rule by rule, through a real scan (`bun run cli scan`'s
 * command) into the database and out of the public API, on both database back ends. A local fake provider
 * answers with bodies written to the official SDKs' types and the providers' documented JSON
 * (test/fixtures/engines), chosen by the URL each engine is configured with and by the prompt asked.
 * Account A's engines answer for real, with every quirk of the real wire; account B's engines refuse,
 * block, stop short, answer nothing, run out of quota, or ask to wait.
 */

const P1 = "best crm for startups"
const P2 = "crm pricing"

interface Call {
  readonly route: string
  readonly path: string
  readonly prompt: string
  readonly body: any
  readonly at: number
}
const calls: Array<Call> = []
let server: ReturnType<typeof Bun.serve>
const base = () => `http://127.0.0.1:${server.port}`

/** The prompt a request asks, whatever the protocol. */
const promptOf = (url: URL, body: any): string =>
  url.searchParams.get("q") ??
    (typeof body?.input === "string" ? body.input : undefined) ??
    body?.contents?.[0]?.parts?.[0]?.text ??
    body?.messages?.[0]?.content ??
    ""

const answer = async (route: string, prompt: string, body: any, url: URL): Promise<Response> => {
  const p1 = prompt === P1
  const same = calls.filter((c) => c.route === route && c.prompt === prompt).length
  switch (route) {
    // Account A: real answers.
    case "a-openai":
      return Response.json(await fixture("openai-responses"))
    case "a-chat":
      return Response.json(await fixture("openai-chat"))
    case "a-claude":
      // The first request pauses its search loop; the continuation (the paused turn sent back) finishes it.
      return Response.json(await fixture(body.messages.length === 1 ? "anthropic-paused" : "anthropic-continued"))
    case "a-gemini":
      return Response.json(await fixture("gemini"))
    case "a-pplx":
      return Response.json(await fixture("perplexity-reasoning"))
    case "a-xai":
      return Response.json(await fixture("xai"))
    case "a-serp":
      return Response.json(await fixture(url.searchParams.get("engine") === "google_ai_mode" ? "serp" : "serp-ai-overview"))
    // Account B: answers that are not answers, and providers that say stop or wait.
    case "b-openai":
      return Response.json(await fixture(p1 ? "openai-responses-incomplete" : "openai-responses-refusal"))
    case "b-chat":
      return Response.json(await fixture(p1 ? "openai-chat-content-filter" : "openai-chat-refusal"))
    case "b-claude":
      // P2 pauses every time: continued 3 times, then incomplete.
      return Response.json(await fixture(p1 ? "anthropic-refusal" : "anthropic-paused"))
    case "b-gemini":
      return Response.json(await fixture(p1 ? "gemini-safety" : "gemini-prompt-blocked"))
    case "b-pplx":
      return Response.json(await fixture(p1 ? "perplexity-empty" : "perplexity-think-only"))
    case "b-quota":
      return Response.json(await fixture("openai-insufficient-quota"), { status: 429 })
    case "b-wait":
      // Gemini's 429 says how long to wait in its body only (no Retry-After header); then it answers.
      return same === 1 ? Response.json(await fixture("gemini-429"), { status: 429 }) : Response.json(await fixture("gemini"))
  }
  return new Response("not found", { status: 404 })
}

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const redirect = redirectResponse(url)
      if (redirect !== null) return redirect
      const text = request.method === "POST" ? await request.text() : ""
      const body = text === "" ? null : JSON.parse(text)
      const route = url.pathname.split("/")[1]!
      const prompt = promptOf(url, body)
      calls.push({ route, path: url.pathname, prompt, body, at: Date.now() })
      return answer(route, prompt, body, url)
    }
  })
})
afterAll(() => server.stop(true))

/** The README's variables, one engine per route. */
const environment = (engines: Record<string, { protocol: string; route: string; model: string }>) => {
  const env: Record<string, string> = {
    ENGINE_RETRIES: "3",
    ENGINE_RETRY_BASE_MS: "10",
    SCAN_SAMPLES: "1",
    SCANNER_PROVIDER_CONCURRENCY: "2"
  }
  for (const [slug, e] of Object.entries(engines)) {
    const name = slug.toUpperCase()
    env[`ENGINE_${name}_PROTOCOL`] = e.protocol
    env[`ENGINE_${name}_URL`] = `${base()}/${e.route}/v1`
    env[`ENGINE_${name}_MODEL`] = e.model
    env[`ENGINE_${name}_API_KEY`] = `key-${slug}`
  }
  return ConfigProvider.fromMap(new Map(Object.entries(env)))
}

const ENGINES_A = {
  chatgpt: { protocol: "openai-responses", route: "a-openai", model: "gpt-5" },
  deepseek: { protocol: "openai-chat", route: "a-chat", model: "deepseek-chat" },
  claude: { protocol: "anthropic", route: "a-claude", model: "claude-sonnet-4-5" },
  gemini: { protocol: "gemini", route: "a-gemini", model: "gemini-2.5-flash" },
  perplexity: { protocol: "perplexity", route: "a-pplx", model: "sonar-reasoning-pro" },
  grok: { protocol: "xai", route: "a-xai", model: "grok-4-fast" },
  ai_mode: { protocol: "serp", route: "a-serp", model: "google_ai_mode" }
}
const ENGINES_B = {
  chatgpt: { protocol: "openai-responses", route: "b-openai", model: "gpt-5" },
  deepseek: { protocol: "openai-chat", route: "b-chat", model: "deepseek-chat" },
  claude: { protocol: "anthropic", route: "b-claude", model: "claude-sonnet-4-5" },
  gemini: { protocol: "gemini", route: "b-gemini", model: "gemini-2.5-flash" },
  perplexity: { protocol: "perplexity", route: "b-pplx", model: "sonar-reasoning" },
  grok: { protocol: "openai-responses", route: "b-quota", model: "gpt-5" },
  copilot: { protocol: "gemini", route: "b-wait", model: "gemini-2.5-flash" }
}

for (const backend of databaseBackends()) {
  describe(`real answers, scanned into the database and read through the API, on ${backend}`, () => {
    let app: TestApp
    let keyA = ""
    let keyB = ""
    let cookieA = ""
    let cookieB = ""
    let accountB = 0
    let brandB = 0
    const printed: Array<string> = []

    /** `bun run cli scan --brand <slug>` with these engines; what it prints is kept. */
    const scan = async (slug: string, engines: Record<string, { protocol: string; route: string; model: string }>) => {
      const log = console.log
      console.log = (...parts: Array<unknown>) => void printed.push(parts.map(String).join(" "))
      try {
        return await app.runServices(
          scanCommand(["--brand", slug]).pipe(
            Effect.provide(Layer.merge(
              AnswerEnginesLive.pipe(Layer.provide(localHttpClient(base))),
              Layer.effect(ScannerConfig, scannerSettingsFromEnv)
            )),
            Effect.withConfigProvider(environment(engines))
          )
        )
      } finally {
        console.log = log
      }
    }
    const get = async (path: string, headers: Record<string, string>) => {
      const response = await app.fetch(path, { headers })
      expect(response.status).toBe(200)
      return json(response) as Promise<any>
    }

    beforeAll(async () => {
      // The fake provider's log is per back end.
      calls.length = 0
      app = await makeTestApp(backend)
      for (const [who, prompts] of [["a", [P1]], ["b", [P1, P2]]] as const) {
        const cookie = await signup(app, `real-${who}@acme.test`)
        const brand = await createBrand(app, cookie, `real-${who}`, { brand_name: "Acme", domain: "acme.com" })
        for (const [name, domain] of [["Globex", "globex.com"], ["Initech", "initech.com"]]) {
          const response = await app.fetch(`/api/v1/me/brands/real-${who}/competitors`, {
            method: "POST",
            headers: { "content-type": "application/json", cookie },
            body: JSON.stringify({ name, domain })
          })
          expect(response.status).toBe(201)
        }
        for (const prompt of prompts) {
          const response = await app.fetch(`/api/v1/me/brands/real-${who}/prompts`, {
            method: "POST",
            headers: { "content-type": "application/json", cookie },
            body: JSON.stringify({ prompt })
          })
          expect(response.status).toBe(201)
        }
        const key = (await createKey(app, cookie)).key
        if (who === "a") {
          ;[keyA, cookieA] = [key, cookie]
        } else {
          ;[keyB, cookieB, brandB] = [key, cookie, brand.id]
          const user = await app.run(Effect.flatMap(AccountsRepo, (repo) => repo.findUserByEmail("real-b@acme.test")))
          accountB = Option.getOrThrow(user).accountId
        }
      }
      expect(await scan("real-a", ENGINES_A)).toBe(0)
      await scan("real-b", ENGINES_B)
    }, 120_000)
    afterAll(() => app.dispose())

    const initechEngines = async () =>
      (await get("/api/public/v1/industry/competitors/Initech/prompts?range=7d", bearer(keyA))).prompts.flatMap((p: any) => p.engines).sort()
    const mentionOn = async (engine: string) =>
      (await get("/api/public/v1/brands/real-a/mentions?range=7d", bearer(keyA))).mentions.find((m: any) => m.engine === engine)
    const fanoutsOn = async (engine: string) =>
      (await get("/api/public/v1/citations/fanouts?range=7d", bearer(keyA))).prompts.find((p: any) => p.engine === engine)?.fanouts

    it("only real answers are observations: refused, blocked, incomplete and empty answers count in no n", async () => {
      const snapshot = (await get("/api/public/v1/brands/real-b/snapshots?range=7d", bearer(keyB))).snapshots[0]
      expect([snapshot.total_responses, snapshot.per_engine_n]).toEqual([2, { copilot: 2 }])
      const model = await get("/api/public/v1/model?range=7d", bearer(keyB))
      expect(model.engines.map((e: any) => [e.engine, e.n])).toEqual([["copilot", 2]])
    })

    it("failures by engine and reason: on the scan status the dashboard reads and in the scan's summary", async () => {
      const status = await get("/api/v1/me/brands/real-b/scans", { cookie: cookieB })
      expect(Object.fromEntries(status.engines.map((e: any) => [e.engine, [e.observations, e.failures, e.failures_by_reason]]))).toEqual({
        chatgpt: [0, 2, { incomplete: 1, refused: 1 }],
        claude: [0, 2, { incomplete: 1, refused: 1 }],
        copilot: [2, 0, {}],
        deepseek: [0, 2, { blocked: 1, refused: 1 }],
        gemini: [0, 2, { blocked: 2 }],
        grok: [0, 2, { insufficient_quota: 1, skipped: 1 }],
        perplexity: [0, 2, { empty: 1, incomplete: 1 }]
      })
      expect(printed).toContain("failures by reason: blocked 3, empty 1, incomplete 3, insufficient_quota 1, refused 3, skipped 1")
      expect(printed.some((line) => /^ {2}deepseek +0 stored +2 failed \(blocked 1, refused 1\)/.test(line))).toBe(true)
      // A blocked Gemini prompt names its reason (it has no candidates at all).
      const failures = await app.run(Effect.flatMap(ObservationsRepo, (repo) => repo.failures(accountB, brandB)))
      expect(failures.filter((f) => f.engine === "gemini").map((f) => [f.reason, f.error]).sort()).toEqual([
        ["blocked", "blocked: the answer was blocked (finishReason SAFETY)"],
        ["blocked", "blocked: the prompt was blocked (promptFeedback.blockReason PROHIBITED_CONTENT)"]
      ])
    })

    it("anthropic: a paused turn is sent back and continued; the narration before the searches is not the answer", async () => {
      const claude = calls.filter((c) => c.route === "a-claude")
      expect(claude.map((c) => c.body.messages.map((m: any) => m.role))).toEqual([["user"], ["user", "assistant"]])
      // The paused turn goes back as it came.
      expect(claude[1]!.body.messages[1].content).toEqual(((await fixture("anthropic-paused")) as any).content)
      expect((await mentionOn("claude")).response_snippet).toBe("Based on the search results, Acme is the CRM most often recommended for startups.")
      // "...starting with Initech." was narration: Initech is not mentioned there (nor in Perplexity's <think>, nor in xAI's visited sources).
      expect(await initechEngines()).toEqual(["ai_mode"])
      // Still paused after 3 continuations: incomplete (account B, second prompt).
      expect(calls.filter((c) => c.route === "b-claude" && c.prompt === P2).length).toBe(1 + 3)
      // Tokens of every request of the turn.
      const status = await get("/api/v1/me/brands/real-a/scans", { cookie: cookieA })
      expect(status.engines.find((e: any) => e.engine === "claude").tokens).toBe(2100 + 120 + 3900 + 210)
    })

    it("openai responses: the searches' sources are asked for and stored; an insufficient_quota 429 is not retried", async () => {
      expect(calls.find((c) => c.route === "a-openai")!.body.include).toEqual(["web_search_call.action.sources"])
      expect(await fanoutsOn("chatgpt")).toEqual([
        {
          index: 1,
          sub_question: "best crm for startups 2026",
          citations: ["https://www.g2.com/categories/crm", "https://acme.com/startups", "https://www.globex.com/pricing"]
        }
      ])
      // One call: billing is not a rate limit; the rest of the cycle is skipped.
      expect(calls.filter((c) => c.route === "b-quota").length).toBe(1)
    })

    it("gemini: redirects resolved to their sources (the brand cited, a competitor found through its source), RetryInfo honoured, tool-use tokens counted", async () => {
      const citations = await get("/api/public/v1/citations?range=7d", bearer(keyA))
      expect(citations.domains.map((d: any) => d.domain)).not.toContain("vertexaisearch.cloud.google.com")
      expect((await mentionOn("gemini")).cited_url).toBe("https://acme.com/startups")
      const globex = await get("/api/public/v1/industry/competitors/Globex/prompts?range=7d", bearer(keyA))
      expect(globex.prompts[0].engines).toContain("gemini")
      const status = await get("/api/v1/me/brands/real-a/scans", { cookie: cookieA })
      expect(status.engines.find((e: any) => e.engine === "gemini").tokens).toBe(12 + 95 + 210)
      // The 429 said "retry in 1.2s" in its body: the retry waited that long (the backoff alone is 10 ms).
      const waited = calls.filter((c) => c.route === "b-wait" && c.prompt === P1).map((c) => c.at)
      expect(waited.length).toBe(2)
      expect(waited[1]! - waited[0]!).toBeGreaterThanOrEqual(1200)
    })

    it("xai: the visited sources go with the fan-outs, the annotations and the links in the text are the citations", async () => {
      expect(await fanoutsOn("grok")).toEqual([
        { index: 1, sub_question: P1, citations: ["https://acme.com/startups", "https://x.com/acme/status/1", "https://initech.com/blog"] }
      ])
      const domains = (await get("/api/public/v1/citations?range=7d", bearer(keyA))).domains.map((d: any) => d.domain)
      expect(domains).not.toContain("x.com")
      expect(domains).not.toContain("initech.com")
    })

    it("perplexity: the <think> section is not the answer", async () => {
      expect((await mentionOn("perplexity")).response_snippet).toBe("Acme is the usual pick for startups [1], with a free tier for small teams [2].")
      // Initech is named only in the reasoning.
      expect(await initechEngines()).not.toContain("perplexity")
    })

    it("serpapi: a list item's title is part of the answer", async () => {
      expect(await initechEngines()).toContain("ai_mode")
    })

    it("citation URLs are stored without utm_* parameters and fragments", async () => {
      expect((await mentionOn("chatgpt")).cited_url).toBe("https://acme.com/startups")
      const urls = ((await fanoutsOn("claude")) ?? []).flatMap((f: any) => f.citations)
      expect(urls).toEqual(["https://initech.com/crm", "https://acme.com/startups"])
    })

    it("share of voice at 0 or with a zero variance: the Wilson interval over the observations naming an entity, not a point", async () => {
      // Account B's two answers both name Acme and Globex (through its cited source), never Initech.
      const metrics = await get("/api/public/v1/industry/metrics?range=7d", bearer(keyB))
      const row = (name: string) => metrics.ranking.find((r: any) => r.name === name)
      expect([row("Initech").share, row("Initech").share_ci95]).toEqual([0, [0, 0.6576]])
      expect([row("Acme").share, row("Acme").share_ci95]).toEqual([0.5, [0.0945, 0.9055]])
      // No previous period: no delta interval, not significant.
      expect([row("Acme").delta_ci95, row("Acme").significant]).toEqual([null, false])
    })
  })
}
