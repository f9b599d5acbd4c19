import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { ConfigProvider, Duration, Effect, Layer, Option } from "effect"
import {
  AnswerEngines,
  AnswerEnginesLive,
  engineConfigsFromEnv,
  makeHttpEngine,
  type EngineConfig
} from "../../src/observations/Engines.js"
import { HttpClient } from "@effect/platform"

/** A local fake of both engine protocols on 127.0.0.1, port 0. */
let server: ReturnType<typeof Bun.serve>
const seen: Array<{ path: string; auth: string | null; body: any }> = []
let flaky = 0

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const body = await request.json().catch(() => null)
      seen.push({ path: url.pathname, auth: request.headers.get("authorization"), body })
      const answer = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) =>
        Response.json({ id: "x", choices: [{ index: 0, message: { role: "assistant", content: "Acme is great [1].", ...message } }], ...extra })
      switch (url.pathname) {
        case "/openai/v1/chat/completions":
          return answer({}, {
            annotations: [
              { type: "url_citation", url_citation: { url: "https://acme.com/a", title: "A" } },
              { type: "url_citation", url_citation: { url: "https://reddit.com/r/x" } },
              { type: "url_citation", url_citation: { url: "https://acme.com/a" } }
            ]
          })
        case "/plain/v1/chat/completions":
          return answer({}, { content: [{ type: "text", text: "See https://acme.com/docs, and https://g2.com/x." }] })
        case "/pplx/chat/completions":
          return answer({ citations: ["https://acme.com/p", "https://en.wikipedia.org/wiki/CRM"], search_results: [{ url: "https://ignored.com" }] })
        case "/pplx-results/chat/completions":
          return answer({ search_results: [{ url: "https://a.com" }, { url: "https://b.com" }] })
        case "/flaky/chat/completions":
          return flaky++ < 2 ? new Response("overloaded", { status: 503 }) : answer({})
        case "/unauthorized/chat/completions":
          return Response.json({ error: { message: "bad key" } }, { status: 401 })
        case "/garbage/chat/completions":
          return new Response("<html>", { status: 200 })
        case "/slow/chat/completions":
          await Bun.sleep(2000)
          return answer({})
      }
      return new Response("not found", { status: 404 })
    }
  })
})
afterAll(() => server.stop(true))

const base = () => `http://127.0.0.1:${server.port}`
const engine = (path: string, protocol: EngineConfig["protocol"], extra: Partial<EngineConfig> = {}) =>
  Effect.map(HttpClient.HttpClient, (client) =>
    makeHttpEngine({ slug: "chatgpt", protocol, baseUrl: base() + path, model: "m-1", apiKey: Option.none(), timeout: Duration.seconds(5), ...extra }, client))
const run = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) => Effect.runPromise(effect.pipe(Effect.provide(FetchHttpClient.layer)))
const ask = (path: string, protocol: EngineConfig["protocol"], extra: Partial<EngineConfig> = {}) =>
  run(Effect.flatMap(engine(path, protocol, extra), (e) => Effect.either(e.ask({ prompt: "best crm", region: "US", language: "en" }))))

describe("OpenAI-compatible adapter", () => {
  it("sends model and prompt, bearer key; reads content and url_citation annotations (deduplicated)", async () => {
    const { Redacted } = await import("effect")
    const result = await ask("/openai/v1", "openai", { apiKey: Option.some(Redacted.make("sk-test")) })
    expect(result._tag).toBe("Right")
    if (result._tag === "Right") {
      expect(result.right).toEqual({ response: "Acme is great [1].", citations: ["https://acme.com/a", "https://reddit.com/r/x"], fanouts: [] })
    }
    const request = seen.find((r) => r.path === "/openai/v1/chat/completions")!
    expect(request.auth).toBe("Bearer sk-test")
    expect(request.body).toEqual({ model: "m-1", messages: [{ role: "user", content: "best crm" }] })
  })

  it("without annotations, takes the URLs written in the answer; content parts are joined", async () => {
    const result = await ask("/plain/v1/", "openai")
    expect(result._tag === "Right" && result.right.citations).toEqual(["https://acme.com/docs", "https://g2.com/x"])
    expect(result._tag === "Right" && result.right.response).toBe("See https://acme.com/docs, and https://g2.com/x.")
  })
})

describe("Perplexity-style adapter", () => {
  it("reads the top-level citations list", async () => {
    const result = await ask("/pplx", "perplexity")
    expect(result._tag === "Right" && result.right.citations).toEqual(["https://acme.com/p", "https://en.wikipedia.org/wiki/CRM"])
  })
  it("falls back to search_results urls", async () => {
    const result = await ask("/pplx-results", "perplexity")
    expect(result._tag === "Right" && result.right.citations).toEqual(["https://a.com", "https://b.com"])
  })
})

describe("failures", () => {
  it("5xx is retryable, 401 and a non-JSON body are not, a timeout is retryable, a closed port is retryable", async () => {
    const unavailable = await ask("/flaky", "openai")
    expect(unavailable._tag === "Left" && [unavailable.left.retryable, unavailable.left.message]).toEqual([true, "HTTP 503: overloaded"])
    const unauthorized = await ask("/unauthorized", "openai")
    expect(unauthorized._tag === "Left" && unauthorized.left.retryable).toBe(false)
    const garbage = await ask("/garbage", "openai")
    expect(garbage._tag === "Left" && [garbage.left.retryable, garbage.left.message]).toEqual([false, "the response is not JSON"])
    const slow = await ask("/slow", "openai", { timeout: Duration.millis(200) })
    expect(slow._tag === "Left" && slow.left.retryable).toBe(true)
    const closed = await run(Effect.flatMap(
      HttpClient.HttpClient,
      (client) =>
        Effect.either(
          makeHttpEngine({ slug: "grok", protocol: "openai", baseUrl: "http://127.0.0.1:1", model: "m", apiKey: Option.none(), timeout: Duration.seconds(2) }, client)
            .ask({ prompt: "x", region: "US", language: "en" })
        )
    ))
    expect(closed._tag === "Left" && closed.left.retryable).toBe(true)
  })
})

describe("configuration from the environment", () => {
  const provider = (env: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(env)))

  it("engines without URL and MODEL are skipped; protocol defaults by slug", async () => {
    const configs = await Effect.runPromise(
      Effect.withConfigProvider(engineConfigsFromEnv, provider({
        ENGINE_CHATGPT_URL: "http://127.0.0.1:9/v1",
        ENGINE_CHATGPT_MODEL: "gpt",
        ENGINE_CHATGPT_API_KEY: "k",
        ENGINE_PERPLEXITY_URL: "http://127.0.0.1:9",
        ENGINE_PERPLEXITY_MODEL: "sonar",
        ENGINE_GEMINI_URL: "http://127.0.0.1:9", // no model: skipped
        ENGINE_AI_MODE_URL: "http://127.0.0.1:9",
        ENGINE_AI_MODE_MODEL: "serp",
        ENGINE_AI_MODE_PROTOCOL: "perplexity",
        ENGINE_TIMEOUT_SECONDS: "7"
      }))
    )
    expect(configs.map((c) => [c.slug, c.protocol, c.model, Option.isSome(c.apiKey), Duration.toSeconds(c.timeout)])).toEqual([
      ["chatgpt", "openai", "gpt", true, 7],
      ["perplexity", "perplexity", "sonar", false, 7],
      ["ai_mode", "perplexity", "serp", false, 7]
    ])
  })

  it("no configuration: no engines", async () => {
    const engines = await Effect.runPromise(
      Effect.provide(AnswerEngines, AnswerEnginesLive.pipe(Layer.provide(FetchHttpClient.layer))).pipe(
        Effect.withConfigProvider(provider({}))
      )
    )
    expect(engines).toEqual([])
  })
})
