import { FetchHttpClient, HttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Duration, Effect, Either, Option, Redacted } from "effect"
import { type EngineConfig, type EngineProtocol, makeHttpEngine } from "../../src/observations/Engines.js"
import { cleanUrl, durationMs, isGroundingRedirect, retryAfterMs } from "../../src/observations/EngineAdapters.js"
import { fixture, localHttpClient, redirectResponse } from "./providers.js"

/**
 * Every engine adapter against responses in its provider's documented format (test/fixtures/engines),
 * served by a local fake provider on 127.0.0.1 port 0. The first path segment picks what the fake
 * answers: ok (the fixture), nocite (an answer without any citation field), 401, 429 (Retry-After: 7),
 * 503, slow (past the timeout), malformed (not JSON), wrongshape (JSON of another shape).
 */

/** The documented answer shape with no citation field at all, per protocol. */
const WITHOUT_CITATIONS: Record<string, unknown> = {
  "openai-responses": {
    output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Acme is fine.", annotations: [] }] }]
  },
  xai: { output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Acme is fine." }] }] },
  "openai-chat": { choices: [{ index: 0, message: { role: "assistant", content: "Acme is fine." } }] },
  perplexity: { choices: [{ index: 0, message: { role: "assistant", content: "Acme is fine." } }] },
  anthropic: { content: [{ type: "text", text: "Acme is fine." }], usage: { input_tokens: 5, output_tokens: 3 } },
  gemini: { candidates: [{ content: { parts: [{ text: "Acme is fine." }] } }] },
  serp: { text_blocks: [{ type: "paragraph", snippet: "Acme is fine." }] }
}

const FIXTURE_OF: Record<string, string> = {
  "openai-responses": "openai-responses",
  xai: "xai",
  "openai-chat": "openai-chat",
  perplexity: "perplexity",
  anthropic: "anthropic",
  gemini: "gemini",
  serp: "serp"
}

interface Seen {
  readonly method: string
  readonly path: string
  readonly search: URLSearchParams
  readonly headers: Headers
  readonly body: any
}
const seen: Array<Seen> = []
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const [, mode, protocol] = url.pathname.split("/")
      const text = request.method === "POST" ? await request.text() : ""
      seen.push({ method: request.method, path: url.pathname, search: url.searchParams, headers: request.headers, body: text === "" ? null : JSON.parse(text) })
      const redirect = redirectResponse(url)
      if (redirect !== null) return redirect
      switch (mode) {
        case "ok":
          if (protocol === "serp" && url.searchParams.get("engine") === "google") {
            // Google lazy-loads this overview: the search answers a page_token for the second request.
            return Response.json({ search_metadata: { status: "Success" }, ai_overview: { page_token: "KIVu-token" }, organic_results: [] })
          }
          if (protocol === "serp" && url.searchParams.get("engine") === "google_ai_overview") {
            return url.searchParams.get("page_token") === "KIVu-token"
              ? Response.json(await fixture("serp-ai-overview"))
              : Response.json({ error: "Invalid page_token" }, { status: 400 })
          }
          return Response.json(await fixture(FIXTURE_OF[protocol!]!))
        case "nocite":
          return Response.json(WITHOUT_CITATIONS[protocol!])
        case "401":
          return Response.json({ error: { message: "invalid api key" } }, { status: 401 })
        case "429":
          return Response.json({ error: { message: "rate limited" } }, { status: 429, headers: { "retry-after": "7" } })
        case "503":
          return new Response("upstream overloaded", { status: 503 })
        case "529":
          // Anthropic's "overloaded" (its error body as documented).
          return Response.json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { status: 529 })
        case "slow":
          await Bun.sleep(1500)
          return Response.json(await fixture(FIXTURE_OF[protocol!]!))
        case "malformed":
          return new Response("{\"choices\": [", { status: 200, headers: { "content-type": "application/json" } })
        case "wrongshape":
          return Response.json({ hello: "world" })
      }
      return new Response("not found", { status: 404 })
    }
  })
})
afterAll(() => server.stop(true))

const ask = (protocol: EngineProtocol, mode: string, extra: Partial<EngineConfig> = {}) => {
  const config: EngineConfig = {
    slug: "chatgpt",
    protocol,
    baseUrl: `http://127.0.0.1:${server.port}/${mode}/${protocol}`,
    model: "model-under-test",
    apiKey: Option.some(Redacted.make("secret-key")),
    timeout: Duration.seconds(5),
    ...extra
  }
  return Effect.runPromise(
    Effect.flatMap(HttpClient.HttpClient, (client) => Effect.either(makeHttpEngine(config, client).ask({ prompt: "best crm for startups", region: "US", language: "en" }))).pipe(
      Effect.provide(localHttpClient(() => `http://127.0.0.1:${server.port}`))
    )
  )
}
const answerOf = async (protocol: EngineProtocol, mode = "ok", extra: Partial<EngineConfig> = {}) => {
  const result = await ask(protocol, mode, extra)
  if (Either.isLeft(result)) throw new Error(`${protocol}: ${result.left.message}`)
  return result.right
}
const lastRequest = () => seen[seen.length - 1]!

describe("openai-responses (Responses API, web_search tool)", () => {
  it("answer text, url_citation annotations, web_search_call queries with their sources, usage; bearer key, model, tool", async () => {
    const answer = await answerOf("openai-responses")
    expect(answer.response).toStartWith("For startups, Acme is a strong pick")
    // utm_* parameters and fragments are not part of a citation; other parameters are.
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://www.g2.com/categories/crm?page=2"])
    expect(answer.fanouts).toEqual([
      {
        sub_question: "best crm for startups 2026",
        citations: ["https://www.g2.com/categories/crm", "https://acme.com/startups", "https://www.globex.com/pricing"]
      }
    ])
    expect(answer.usage).toEqual({ inputTokens: 328, outputTokens: 356, costUsd: null })
    const request = lastRequest()
    expect([request.method, request.path]).toEqual(["POST", "/ok/openai-responses/responses"])
    expect(request.headers.get("authorization")).toBe("Bearer secret-key")
    // The searches' sources come only when asked for.
    expect(request.body).toEqual({
      model: "model-under-test",
      input: "best crm for startups",
      tools: [{ type: "web_search" }],
      include: ["web_search_call.action.sources"]
    })
  })
})

describe("openai-chat (chat completions)", () => {
  it("url_citation annotations, usage; bearer key and model", async () => {
    const answer = await answerOf("openai-chat")
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://reddit.com/r/crm/globex"])
    expect(answer.fanouts).toEqual([])
    expect(answer.usage).toEqual({ inputTokens: 1117, outputTokens: 46, costUsd: null })
    expect(lastRequest().path).toBe("/ok/openai-chat/chat/completions")
    expect(lastRequest().headers.get("authorization")).toBe("Bearer secret-key")
    expect(lastRequest().body.model).toBe("model-under-test")
  })
})

describe("anthropic (Messages API, web_search tool)", () => {
  it("text blocks after the last search joined as sent (narration left out), their citations, each search's query with its results; x-api-key and version header", async () => {
    const answer = await answerOf("anthropic")
    expect(answer.response).toBe("Based on the search results, Acme is the most recommended CRM for startups, with Globex as a cheaper option.")
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://www.g2.com/categories/crm"])
    expect(answer.fanouts).toEqual([
      { sub_question: "best crm for startups 2026", citations: ["https://acme.com/startups", "https://www.g2.com/categories/crm"] },
      { sub_question: "acme crm pricing", citations: ["https://acme.com/pricing"] }
    ])
    expect(answer.usage).toEqual({ inputTokens: 6039, outputTokens: 931, costUsd: null })
    const request = lastRequest()
    expect(request.path).toBe("/ok/anthropic/messages")
    expect(request.headers.get("x-api-key")).toBe("secret-key")
    expect(request.headers.get("authorization")).toBeNull()
    expect(request.headers.get("anthropic-version")).toBe("2023-06-01")
    expect(request.body).toMatchObject({
      model: "model-under-test",
      messages: [{ role: "user", content: "best crm for startups" }],
      tools: [{ type: "web_search_20250305", name: "web_search" }]
    })
  })
})

describe("anthropic overloaded", () => {
  it("529 is retried like 429", async () => {
    const result = await ask("anthropic", "529")
    expect(Either.isLeft(result) && [result.left.retryable, result.left.status, result.left.reason]).toEqual([true, 529, "provider_error"])
  })
})

describe("gemini (generateContent, Google Search grounding)", () => {
  it("text, grounding chunks resolved to their sources, webSearchQueries as fan-outs, usage with tool-use tokens; x-goog-api-key, model in the path", async () => {
    const before = seen.length
    const answer = await answerOf("gemini")
    expect(answer.response).toBe("Acme is widely recommended for startups. A cheaper alternative is often suggested.")
    // Redirects resolved (302 Location); an unresolved one falls back to its title's domain, or is dropped.
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://g2.com/", "https://www.globex.com/pricing"])
    const resolutions = seen.slice(before).filter((r) => r.path.startsWith("/grounding-api-redirect/"))
    expect(resolutions.map((r) => r.method)).toEqual(["GET", "GET", "GET", "GET"])
    const again = before
    expect(answer.fanouts).toEqual([
      { sub_question: "best crm for startups 2026", citations: [] },
      { sub_question: "acme vs globex crm", citations: [] }
    ])
    expect(answer.usage).toEqual({ inputTokens: 12 + 95, outputTokens: 210, costUsd: null })
    const request = seen.slice(again).find((r) => r.path.endsWith(":generateContent"))!
    expect(request.path).toBe("/ok/gemini/models/model-under-test:generateContent")
    expect(request.headers.get("x-goog-api-key")).toBe("secret-key")
    expect(request.body).toEqual({ contents: [{ role: "user", parts: [{ text: "best crm for startups" }] }], tools: [{ google_search: {} }] })
  })
})

describe("gemini grounding redirects, one engine", () => {
  it("resolved ones are remembered: asking again resolves only the two that failed; no redirect URL is ever a citation", async () => {
    const config: EngineConfig = {
      slug: "gemini",
      protocol: "gemini",
      baseUrl: `http://127.0.0.1:${server.port}/ok/gemini`,
      model: "m",
      apiKey: Option.none(),
      timeout: Duration.seconds(5)
    }
    const before = seen.length
    const answers = await Effect.runPromise(
      Effect.flatMap(HttpClient.HttpClient, (client) => {
        const engine = makeHttpEngine(config, client)
        const question = { prompt: "best crm for startups", region: "US", language: "en" }
        return Effect.all([engine.ask(question), engine.ask(question)])
      }).pipe(Effect.provide(localHttpClient(() => `http://127.0.0.1:${server.port}`)))
    )
    expect(answers.map((a) => a.citations)).toEqual([
      ["https://acme.com/startups", "https://g2.com/", "https://www.globex.com/pricing"],
      ["https://acme.com/startups", "https://g2.com/", "https://www.globex.com/pricing"]
    ])
    const resolved = seen.slice(before).filter((r) => r.path.startsWith("/grounding-api-redirect/")).map((r) => r.path.split("/").at(-1))
    expect(resolved).toEqual(["AbF9wXE1", "AbF9wXE2", "AbF9wXE3", "AbF9wXE4", "AbF9wXE2", "AbF9wXE4"])
  })
})

describe("perplexity (Sonar chat completions)", () => {
  it("citations list, usage with the reported cost; bearer key", async () => {
    const answer = await answerOf("perplexity")
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://en.wikipedia.org/wiki/Customer_relationship_management"])
    expect(answer.usage).toEqual({ inputTokens: 14, outputTokens: 70, costUsd: 0.00709 })
    expect(lastRequest().headers.get("authorization")).toBe("Bearer secret-key")
    expect(lastRequest().body).toEqual({ model: "model-under-test", messages: [{ role: "user", content: "best crm for startups" }] })
  })
})

describe("xai (Responses-compatible API with web search)", () => {
  it("annotations and the links in the text are the citations; the visited sources (top-level citations) go with the fan-out; bearer key", async () => {
    const answer = await answerOf("xai")
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://www.g2.com/products/globex"])
    expect(answer.fanouts).toEqual([
      { sub_question: "best crm for startups", citations: ["https://acme.com/startups", "https://x.com/acme/status/1", "https://initech.com/blog"] }
    ])
    expect(lastRequest().path).toBe("/ok/xai/responses")
    expect(lastRequest().headers.get("authorization")).toBe("Bearer secret-key")
  })
})

describe("serp (SerpApi: Google AI Mode, AI Overview, Bing Copilot)", () => {
  it("text blocks (lists flattened) and references; engine and key as query parameters", async () => {
    const answer = await answerOf("serp", "ok", { model: "google_ai_mode", provider: "serpapi" })
    // A list item reads as the page shows it: its title, then its snippet.
    expect(answer.response).toBe("Acme is often recommended for startups.\nGlobex: cheaper plans.\nInitech Enterprise focus, strong reporting.")
    expect(answer.citations).toEqual(["https://acme.com/startups", "https://globex.com/pricing", "https://www.reddit.com/r/crm/"])
    const request = lastRequest()
    expect([request.method, request.path]).toEqual(["GET", "/ok/serp/search.json"])
    expect([request.search.get("engine"), request.search.get("q"), request.search.get("api_key")]).toEqual([
      "google_ai_mode",
      "best crm for startups",
      "secret-key"
    ])
  })
  it("AI Overview: the Google search, then the google_ai_overview request with its page_token", async () => {
    const before = seen.length
    const answer = await answerOf("serp", "ok", { model: "google_ai_overview" })
    expect(answer).toMatchObject({ response: "Acme and Globex are common startup CRMs.", citations: ["https://acme.com/", "https://globex.com/"] })
    const calls = seen.slice(before)
    expect(calls.map((c) => [c.search.get("engine"), c.search.get("q"), c.search.get("page_token"), c.search.get("api_key")])).toEqual([
      ["google", "best crm for startups", null, "secret-key"],
      ["google_ai_overview", null, "KIVu-token", "secret-key"]
    ])
  })
  it("an unknown provider is refused without a call", async () => {
    const before = seen.length
    const result = await ask("serp", "ok", { provider: "brightdata" })
    expect(Either.isLeft(result) && [result.left.retryable, result.left.message]).toEqual([false, "unknown SERP provider brightdata (supported: serpapi)"])
    expect(seen.length).toBe(before)
  })
})

const PROTOCOLS: ReadonlyArray<EngineProtocol> = ["openai-responses", "openai-chat", "anthropic", "gemini", "perplexity", "xai", "serp"]

describe("failure modes of every adapter", () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: no citations, 401, 429 with Retry-After, 503, timeout, malformed JSON, another shape`, async () => {
      const bare = await answerOf(protocol, "nocite")
      expect(bare).toMatchObject({ response: "Acme is fine.", citations: [], fanouts: [] })

      const failure = async (mode: string, extra: Partial<EngineConfig> = {}) => {
        const result = await ask(protocol, mode, extra)
        if (Either.isRight(result)) throw new Error(`${protocol} ${mode}: expected a failure`)
        return result.left
      }
      expect(await failure("401")).toMatchObject({ retryable: false, status: 401, engine: "chatgpt" })
      expect(await failure("429")).toMatchObject({ retryable: true, status: 429, retryAfterMs: 7000 })
      expect(await failure("503")).toMatchObject({ retryable: true, status: 503, message: "HTTP 503: upstream overloaded" })
      const slow = await failure("slow", { timeout: Duration.millis(200) })
      expect([slow.retryable, slow.message]).toEqual([true, "timed out after 200ms"])
      expect(await failure("malformed")).toMatchObject({ retryable: false, message: "the response is not JSON" })
      const shape = await failure("wrongshape")
      expect(shape.retryable).toBe(false)
      // A SERP answer is all optional blocks: another shape reads as "no AI answer", also final.
      // Gemini's fields are all optional too (a blocked prompt has no candidates): no candidate is an empty answer.
      expect(shape.message).toStartWith(
        protocol === "serp" ? "empty: the response holds no AI answer" : protocol === "gemini" ? "empty: the response holds no candidate" : "unexpected response shape"
      )
    })
  }
})

describe("citation URLs and waits", () => {
  it("tracking parameters (utm_*) and fragments are dropped, the rest kept as given", () => {
    expect(cleanUrl("https://a.com/x?utm_source=openai")).toBe("https://a.com/x")
    expect(cleanUrl("https://a.com/x?id=3&utm_medium=chat&Sort=Desc#top")).toBe("https://a.com/x?id=3&Sort=Desc")
    expect(cleanUrl("https://a.com/x?utmost=1")).toBe("https://a.com/x?utmost=1")
  })
  it("only Google's grounding redirector is ever resolved", () => {
    expect(isGroundingRedirect("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbF9")).toBe(true)
    expect(isGroundingRedirect("https://vertexaisearch.cloud.google.com.example.com/grounding-api-redirect/AbF9")).toBe(false)
    expect(isGroundingRedirect("https://vertexaisearch.cloud.google.com/other/AbF9")).toBe(false)
    expect(isGroundingRedirect("http://127.0.0.1/grounding-api-redirect/AbF9")).toBe(false)
  })
  it("Google's RetryInfo retryDelay", () => {
    expect(durationMs("37s")).toBe(37_000)
    expect(durationMs("1.2s")).toBe(1200)
    expect(durationMs("soon")).toBeUndefined()
  })
})

describe("Retry-After", () => {
  it("seconds or an HTTP date; unreadable = none", () => {
    expect(retryAfterMs("120")).toBe(120_000)
    expect(retryAfterMs("Wed, 21 Oct 2026 07:28:10 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT"))).toBe(10_000)
    expect(retryAfterMs("soon")).toBeUndefined()
    expect(retryAfterMs(undefined)).toBeUndefined()
  })
})
