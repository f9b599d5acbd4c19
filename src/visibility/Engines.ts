import { HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Config, Context, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import { ENGINE_SLUGS } from "../platform/Schemas.js"

/**
 * Answer engines behind one interface. Adapters speak an engine's HTTP JSON; which engines run,
 * where and with which model comes from the environment (docs/observations.md). An engine with
 * no configuration is absent from the list: the scanner skips it.
 */

export type EngineSlug = (typeof ENGINE_SLUGS)[number]

export interface EngineQuestion {
  readonly prompt: string
  readonly region: string
  readonly language: string
}

export interface EngineAnswer {
  readonly response: string
  readonly citations: ReadonlyArray<string>
  readonly fanouts: ReadonlyArray<{ readonly sub_question: string; readonly citations: ReadonlyArray<string> }>
}

/** A failed call; `retryable` for network errors, timeouts, 429 and 5xx. */
export class EngineError extends Data.TaggedError("EngineError")<{
  readonly engine: string
  readonly message: string
  readonly retryable: boolean
}> {}

export interface AnswerEngine {
  readonly slug: string
  readonly ask: (question: EngineQuestion) => Effect.Effect<EngineAnswer, EngineError>
}

/** The configured engines (possibly none). */
export class AnswerEngines extends Context.Tag("AnswerEngines")<AnswerEngines, ReadonlyArray<AnswerEngine>>() {}

export type EngineProtocol = "openai" | "perplexity"

export interface EngineConfig {
  readonly slug: string
  readonly protocol: EngineProtocol
  /** Base URL up to the API version, e.g. https://api.example.com/v1; the adapter adds /chat/completions. */
  readonly baseUrl: string
  readonly model: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly timeout: Duration.Duration
}

// ---------------------------------------------------------------------------
// Response parsing (pure)
// ---------------------------------------------------------------------------

const URL_IN_TEXT = /https?:\/\/[^\s<>()\[\]"'`]+/g

const unique = (urls: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const seen = new Set<string>()
  for (const raw of urls) {
    const url = raw.replace(/[.,;:!?]+$/, "")
    if (url === "" || seen.has(url)) continue
    seen.add(url)
    out.push(url)
  }
  return out
}

const messageText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "object" && part !== null && typeof (part as any).text === "string" ? (part as any).text : ""))
      .join("")
  }
  return ""
}

const firstMessage = (body: any) => body?.choices?.[0]?.message

/**
 * OpenAI-compatible chat completion: the answer is choices[0].message.content; citations are the
 * message's url_citation annotations in order, else the top-level `citations` list if the server
 * sends one, else the URLs written in the answer.
 */
export const parseOpenAiAnswer = (body: unknown): EngineAnswer | null => {
  const message = firstMessage(body)
  if (message === undefined || message === null) return null
  const response = messageText(message.content)
  const annotations: Array<string> = Array.isArray(message.annotations)
    ? message.annotations
      .map((a: any) => a?.url_citation?.url ?? (a?.type === "url_citation" ? a?.url : undefined))
      .filter((u: unknown): u is string => typeof u === "string")
    : []
  const topLevel = Array.isArray((body as any).citations)
    ? (body as any).citations.filter((u: unknown): u is string => typeof u === "string")
    : []
  const citations = annotations.length > 0 ? annotations : topLevel.length > 0 ? topLevel : (response.match(URL_IN_TEXT) ?? [])
  return { response, citations: unique(citations), fanouts: [] }
}

/**
 * Perplexity-style chat completion: the answer is choices[0].message.content and the sources are
 * the top-level `citations` list (URLs), else `search_results[].url`.
 */
export const parsePerplexityAnswer = (body: unknown): EngineAnswer | null => {
  const message = firstMessage(body)
  if (message === undefined || message === null) return null
  const response = messageText(message.content)
  const b = body as any
  const citations: Array<string> = Array.isArray(b.citations)
    ? b.citations.map((c: any) => (typeof c === "string" ? c : c?.url)).filter((u: unknown): u is string => typeof u === "string")
    : Array.isArray(b.search_results)
    ? b.search_results.map((r: any) => r?.url).filter((u: unknown): u is string => typeof u === "string")
    : []
  return { response, citations: unique(citations), fanouts: [] }
}

// ---------------------------------------------------------------------------
// The HTTP adapter
// ---------------------------------------------------------------------------

const isRetryableStatus = (status: number) => status === 408 || status === 429 || status >= 500

export const makeHttpEngine = (config: EngineConfig, client: HttpClient.HttpClient): AnswerEngine => {
  const url = config.baseUrl.replace(/\/+$/, "") + "/chat/completions"
  const parse = config.protocol === "perplexity" ? parsePerplexityAnswer : parseOpenAiAnswer
  const fail = (message: string, retryable: boolean) => new EngineError({ engine: config.slug, message, retryable })
  return {
    slug: config.slug,
    ask: (question) =>
      Effect.gen(function*() {
        let request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeader("content-type", "application/json"),
          HttpClientRequest.setBody(
            HttpBody.text(
              JSON.stringify({ model: config.model, messages: [{ role: "user", content: question.prompt }] }),
              "application/json"
            )
          )
        )
        if (Option.isSome(config.apiKey)) request = HttpClientRequest.bearerToken(request, Redacted.value(config.apiKey.value))
        const response = yield* client.execute(request).pipe(
          Effect.timeoutFail({ duration: config.timeout, onTimeout: () => fail(`timed out after ${Duration.format(config.timeout)}`, true) }),
          Effect.catchTags({
            RequestError: (e) => Effect.fail(fail(`request failed: ${e.message}`, true)),
            ResponseError: (e) => Effect.fail(fail(`bad response: ${e.message}`, true))
          }),
          Effect.scoped
        )
        const text = yield* response.text.pipe(Effect.catchAll((e) => Effect.fail(fail(`cannot read the response: ${e.message}`, true))))
        if (response.status < 200 || response.status >= 300) {
          return yield* Effect.fail(fail(`HTTP ${response.status}: ${text.slice(0, 200)}`, isRetryableStatus(response.status)))
        }
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          return yield* Effect.fail(fail("the response is not JSON", false))
        }
        const answer = parse(body)
        if (answer === null) return yield* Effect.fail(fail("the response has no choices[0].message", false))
        return answer
      })
  }
}

// ---------------------------------------------------------------------------
// Configuration from the environment
// ---------------------------------------------------------------------------

const envName = (slug: string) => slug.toUpperCase()

/**
 * ENGINE_<SLUG>_URL and ENGINE_<SLUG>_MODEL configure an engine (both required), with optional
 * ENGINE_<SLUG>_API_KEY and ENGINE_<SLUG>_PROTOCOL (openai or perplexity; default perplexity for
 * the perplexity engine, openai for the others). ENGINE_TIMEOUT_SECONDS bounds one call (default 60).
 */
export const engineConfigsFromEnv: Config.Config<ReadonlyArray<EngineConfig>> = Config.all({
  timeoutSeconds: Config.integer("ENGINE_TIMEOUT_SECONDS").pipe(Config.withDefault(60)),
  engines: Config.all(
    ENGINE_SLUGS.map((slug) =>
      Config.all({
        url: Config.option(Config.string(`ENGINE_${envName(slug)}_URL`)),
        model: Config.option(Config.string(`ENGINE_${envName(slug)}_MODEL`)),
        apiKey: Config.option(Config.redacted(`ENGINE_${envName(slug)}_API_KEY`)),
        protocol: Config.option(Config.literal("openai", "perplexity")(`ENGINE_${envName(slug)}_PROTOCOL`))
      }).pipe(Config.map((c) => ({ slug, ...c })))
    )
  )
}).pipe(
  Config.map(({ engines, timeoutSeconds }) =>
    engines.flatMap((e): Array<EngineConfig> => {
      const url = Option.getOrElse(e.url, () => "").trim()
      const model = Option.getOrElse(e.model, () => "").trim()
      if (url === "" || model === "") return []
      return [{
        slug: e.slug,
        protocol: Option.getOrElse(e.protocol, () => (e.slug === "perplexity" ? "perplexity" as const : "openai" as const)),
        baseUrl: url,
        model,
        apiKey: Option.filter(e.apiKey, (k) => Redacted.value(k).trim() !== ""),
        timeout: Duration.seconds(Math.max(1, timeoutSeconds))
      }]
    })
  )
)

/** The engines configured in the environment, over the given HttpClient. */
export const AnswerEnginesFromEnv = Layer.effect(
  AnswerEngines,
  Effect.gen(function*() {
    const configs = yield* engineConfigsFromEnv
    const client = yield* HttpClient.HttpClient
    return configs.map((config) => makeHttpEngine(config, client))
  })
)

export const answerEngines = (engines: ReadonlyArray<AnswerEngine>) => Layer.succeed(AnswerEngines, engines)
