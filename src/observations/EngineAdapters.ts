import { HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, ParseResult, Redacted, Schema } from "effect"

/**
 * One adapter per engine protocol (docs/observations.md, "Engine adapters"): each builds the
 * provider's plain (non-streaming) request, sends the key the way the provider documents it, and
 * decodes the provider's JSON with a Schema into an answer, its own cited sources, the searches the
 * engine ran (fan-outs, with their sources where the provider links them) and the tokens used.
 * Failures are values: 401/403 are final, 408/429/5xx/timeouts/network errors are retryable and a
 * 429's Retry-After is kept so that the scanner never retries sooner.
 */

export const ENGINE_PROTOCOLS = [
  "openai",
  "openai-responses",
  "openai-chat",
  "anthropic",
  "gemini",
  "perplexity",
  "xai",
  "serp"
] as const
/** `openai` is the earlier name of `openai-chat` (kept so existing settings work). */
export type EngineProtocol = (typeof ENGINE_PROTOCOLS)[number]

export interface AdapterConfig {
  readonly slug: string
  readonly protocol: EngineProtocol
  /** The provider's base URL; the adapter appends the API's path. */
  readonly baseUrl: string
  /** The model, or for `serp` the provider's engine (e.g. google_ai_mode). */
  readonly model: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly timeout: Duration.Duration
  /** `serp` only: the SERP data provider (serpapi). */
  readonly provider?: string | undefined
}

export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  /** The provider's reported cost in USD, when it reports one. */
  readonly costUsd: number | null
}

export interface AdapterAnswer {
  readonly response: string
  readonly citations: ReadonlyArray<string>
  readonly fanouts: ReadonlyArray<{ readonly sub_question: string; readonly citations: ReadonlyArray<string> }>
  readonly usage?: TokenUsage | undefined
}

export interface AdapterFailure {
  readonly message: string
  readonly retryable: boolean
  /** HTTP status, when the provider answered. */
  readonly status?: number | undefined
  /** From a 429/503's Retry-After: the earliest retry, in milliseconds. */
  readonly retryAfterMs?: number | undefined
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const URL_IN_TEXT = /https?:\/\/[^\s<>()[\]"'`]+/g

/** Distinct URLs in order, trailing punctuation dropped. */
export const uniqueUrls = (urls: ReadonlyArray<string>): Array<string> => {
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

const urlsInText = (text: string) => text.match(URL_IN_TEXT) ?? []

/** Retry-After: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterMs = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

const Int = Schema.optional(Schema.NullOr(Schema.Number))
const num = (x: number | null | undefined) => x ?? 0

// ---------------------------------------------------------------------------
// OpenAI Responses API (also xAI's): output items, url_citation annotations, web_search_call queries
// ---------------------------------------------------------------------------

const UrlCitation = Schema.Struct({ type: Schema.Literal("url_citation"), url: Schema.String })
const OtherAnnotation = Schema.Struct({ type: Schema.String })
const ResponsesContent = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  annotations: Schema.optional(Schema.Array(Schema.Union(UrlCitation, OtherAnnotation)))
})
const ResponsesOutputItem = Schema.Struct({
  type: Schema.String,
  content: Schema.optional(Schema.Array(ResponsesContent)),
  action: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    query: Schema.optional(Schema.String),
    queries: Schema.optional(Schema.Array(Schema.String)),
    sources: Schema.optional(Schema.Array(Schema.Struct({ url: Schema.optional(Schema.String) })))
  }))
})
export const ResponsesBody = Schema.Struct({
  output: Schema.Array(ResponsesOutputItem),
  citations: Schema.optional(Schema.Array(Schema.String)),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ input_tokens: Int, output_tokens: Int })))
})

const isUrlCitation = (a: { readonly type: string }): a is typeof UrlCitation.Type => a.type === "url_citation" && "url" in a

export const fromResponses = (body: typeof ResponsesBody.Type): AdapterAnswer => {
  const texts: Array<string> = []
  const cited: Array<string> = []
  const fanouts: Array<{ sub_question: string; citations: Array<string> }> = []
  for (const item of body.output) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type !== "output_text" || part.text === undefined) continue
        texts.push(part.text)
        for (const a of part.annotations ?? []) if (isUrlCitation(a)) cited.push(a.url)
      }
    } else if (item.type === "web_search_call" && item.action !== undefined) {
      const sources = uniqueUrls((item.action.sources ?? []).flatMap((s) => (s.url === undefined ? [] : [s.url])))
      const queries = item.action.queries ?? (item.action.query === undefined ? [] : [item.action.query])
      for (const query of queries) if (query.trim() !== "") fanouts.push({ sub_question: query, citations: sources })
    }
  }
  const response = texts.join("\n\n")
  const citations = cited.length > 0 ? cited : (body.citations ?? []).length > 0 ? [...body.citations!] : urlsInText(response)
  return {
    response,
    citations: uniqueUrls(citations),
    fanouts,
    usage: body.usage ? { inputTokens: num(body.usage.input_tokens), outputTokens: num(body.usage.output_tokens), costUsd: null } : undefined
  }
}

// ---------------------------------------------------------------------------
// Chat completions (OpenAI-compatible, Perplexity Sonar)
// ---------------------------------------------------------------------------

const ChatAnnotation = Schema.Struct({
  type: Schema.String,
  url: Schema.optional(Schema.String),
  url_citation: Schema.optional(Schema.Struct({ url: Schema.String }))
})
const ChatContent = Schema.Union(
  Schema.String,
  Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })),
  Schema.Null
)
const ChatUsage = Schema.Struct({
  prompt_tokens: Int,
  completion_tokens: Int,
  cost: Schema.optional(Schema.NullOr(Schema.Struct({ total_cost: Int })))
})
export const ChatBody = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({ content: ChatContent, annotations: Schema.optional(Schema.NullOr(Schema.Array(ChatAnnotation))) })
  })),
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  search_results: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ url: Schema.String })))),
  usage: Schema.optional(Schema.NullOr(ChatUsage))
})

const chatText = (content: typeof ChatContent.Type) =>
  content === null ? "" : typeof content === "string" ? content : content.map((part) => part.text ?? "").join("")

const chatUsage = (usage: typeof ChatUsage.Type | null | undefined): TokenUsage | undefined =>
  usage ? { inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens), costUsd: usage.cost?.total_cost ?? null } : undefined

/** OpenAI-compatible: url_citation annotations, else a top-level citations list, else URLs in the text. */
export const fromChat = (body: typeof ChatBody.Type): AdapterAnswer => {
  const message = body.choices[0].message
  const response = chatText(message.content)
  const annotations = (message.annotations ?? []).flatMap((a) => {
    const url = a.url_citation?.url ?? (a.type === "url_citation" ? a.url : undefined)
    return url === undefined ? [] : [url]
  })
  const topLevel = body.citations ?? []
  const citations = annotations.length > 0 ? annotations : topLevel.length > 0 ? topLevel : urlsInText(response)
  return { response, citations: uniqueUrls(citations), fanouts: [], usage: chatUsage(body.usage) }
}

/** Perplexity Sonar: the top-level citations list, else search_results[].url. It does not expose its queries. */
export const fromPerplexity = (body: typeof ChatBody.Type): AdapterAnswer => {
  const response = chatText(body.choices[0].message.content)
  const citations = (body.citations ?? []).length > 0 ? body.citations! : (body.search_results ?? []).map((r) => r.url)
  return { response, citations: uniqueUrls(citations), fanouts: [], usage: chatUsage(body.usage) }
}

// ---------------------------------------------------------------------------
// Anthropic Messages API with the web search tool
// ---------------------------------------------------------------------------

const AnthropicBlock = Schema.Struct({
  type: Schema.String,
  id: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Struct({ query: Schema.optional(Schema.String) })),
  tool_use_id: Schema.optional(Schema.String),
  // web_search_tool_result: a list of results, or an error object.
  content: Schema.optional(Schema.Union(Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.optional(Schema.String) })), Schema.Struct({ type: Schema.String }))),
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ type: Schema.String, url: Schema.optional(Schema.String) }))))
})
export const AnthropicBody = Schema.Struct({
  content: Schema.Array(AnthropicBlock),
  usage: Schema.optional(Schema.Struct({ input_tokens: Int, output_tokens: Int }))
})

export const fromAnthropic = (body: typeof AnthropicBody.Type): AdapterAnswer => {
  const texts: Array<string> = []
  const cited: Array<string> = []
  const queries: Array<{ id: string; query: string }> = []
  const results = new Map<string, Array<string>>()
  for (const block of body.content) {
    if (block.type === "text" && block.text !== undefined) {
      texts.push(block.text)
      for (const c of block.citations ?? []) if (c.url !== undefined) cited.push(c.url)
    } else if (block.type === "server_tool_use" && block.name === "web_search" && block.input?.query !== undefined) {
      queries.push({ id: block.id ?? "", query: block.input.query })
    } else if (block.type === "web_search_tool_result" && block.tool_use_id !== undefined && Array.isArray(block.content)) {
      results.set(block.tool_use_id, block.content.flatMap((r) => (r.type === "web_search_result" && r.url !== undefined ? [r.url] : [])))
    }
  }
  const response = texts.join("")
  return {
    response,
    citations: uniqueUrls(cited.length > 0 ? cited : urlsInText(response)),
    fanouts: queries.map((q) => ({ sub_question: q.query, citations: uniqueUrls(results.get(q.id) ?? []) })),
    usage: body.usage ? { inputTokens: num(body.usage.input_tokens), outputTokens: num(body.usage.output_tokens), costUsd: null } : undefined
  }
}

// ---------------------------------------------------------------------------
// Gemini generateContent with Google Search grounding
// ---------------------------------------------------------------------------

export const GeminiBody = Schema.Struct({
  candidates: Schema.NonEmptyArray(Schema.Struct({
    content: Schema.optional(Schema.Struct({ parts: Schema.optional(Schema.Array(Schema.Struct({ text: Schema.optional(Schema.String) }))) })),
    groundingMetadata: Schema.optional(Schema.Struct({
      webSearchQueries: Schema.optional(Schema.Array(Schema.String)),
      groundingChunks: Schema.optional(Schema.Array(Schema.Struct({
        web: Schema.optional(Schema.Struct({ uri: Schema.String, title: Schema.optional(Schema.String) }))
      })))
    }))
  })),
  usageMetadata: Schema.optional(Schema.Struct({ promptTokenCount: Int, candidatesTokenCount: Int, thoughtsTokenCount: Int }))
})

/** Grounding chunks are the citations; Gemini does not link its search queries to chunks, so fan-outs carry none. */
export const fromGemini = (body: typeof GeminiBody.Type): AdapterAnswer => {
  const candidate = body.candidates[0]
  const response = (candidate.content?.parts ?? []).map((p) => p.text ?? "").join("")
  const grounding = candidate.groundingMetadata
  const chunks = (grounding?.groundingChunks ?? []).flatMap((c) => (c.web === undefined ? [] : [c.web.uri]))
  const usage = body.usageMetadata
  return {
    response,
    citations: uniqueUrls(chunks.length > 0 ? chunks : urlsInText(response)),
    fanouts: (grounding?.webSearchQueries ?? []).filter((q) => q.trim() !== "").map((q) => ({ sub_question: q, citations: [] })),
    usage: usage
      ? { inputTokens: num(usage.promptTokenCount), outputTokens: num(usage.candidatesTokenCount) + num(usage.thoughtsTokenCount), costUsd: null }
      : undefined
  }
}

// ---------------------------------------------------------------------------
// SERP API (SerpApi's Google AI Overview, Google AI Mode, Bing Copilot engines)
// ---------------------------------------------------------------------------

interface SerpTextBlock {
  readonly type?: string | undefined
  readonly snippet?: string | undefined
  readonly reference_indexes?: ReadonlyArray<number> | undefined
  readonly list?: ReadonlyArray<SerpTextBlock> | undefined
  readonly text_blocks?: ReadonlyArray<SerpTextBlock> | undefined
}
const SerpTextBlock: Schema.Schema<SerpTextBlock> = Schema.Struct({
  type: Schema.optional(Schema.String),
  snippet: Schema.optional(Schema.String),
  reference_indexes: Schema.optional(Schema.Array(Schema.Number)),
  list: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<SerpTextBlock> => SerpTextBlock))),
  text_blocks: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<SerpTextBlock> => SerpTextBlock)))
})
const SerpReference = Schema.Struct({ link: Schema.String, index: Schema.optional(Schema.Number) })
const SerpAnswer = Schema.Struct({
  text_blocks: Schema.optional(Schema.Array(SerpTextBlock)),
  references: Schema.optional(Schema.Array(SerpReference)),
  // Google lazy-loads some AI Overviews: the search answers a short-lived token for a second request.
  page_token: Schema.optional(Schema.String)
})
export const SerpBody = Schema.Struct({
  error: Schema.optional(Schema.String),
  text_blocks: Schema.optional(Schema.Array(SerpTextBlock)),
  references: Schema.optional(Schema.Array(SerpReference)),
  ai_overview: Schema.optional(SerpAnswer)
})

const blockTexts = (blocks: ReadonlyArray<SerpTextBlock>): Array<string> =>
  blocks.flatMap((b) => [
    ...(b.snippet === undefined || b.snippet === "" ? [] : [b.snippet]),
    ...blockTexts(b.list ?? []),
    ...blockTexts(b.text_blocks ?? [])
  ])

/**
 * The answer's text blocks joined; references in the provider's order are the citations. No fan-outs
 * are exposed. A string is a failure: the provider's `error`, or no answer block at all.
 */
export const fromSerp = (body: typeof SerpBody.Type): AdapterAnswer | string => {
  if (body.error !== undefined) return body.error
  // No answer block (the page showed no AI answer, or another shape): not stored as an empty answer.
  if (body.text_blocks === undefined && body.ai_overview?.text_blocks === undefined) return "the response holds no AI answer (text_blocks)"
  const answer = body.text_blocks !== undefined ? body : body.ai_overview ?? {}
  const response = blockTexts(answer.text_blocks ?? []).join("\n")
  return { response, citations: uniqueUrls((answer.references ?? []).map((r) => r.link)), fanouts: [] }
}

// ---------------------------------------------------------------------------
// Requests per protocol
// ---------------------------------------------------------------------------

const trimBase = (url: string) => url.replace(/\/+$/, "")
const keyOf = (config: AdapterConfig) => Option.map(config.apiKey, Redacted.value)

const jsonPost = (url: string, body: unknown) =>
  HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeader("content-type", "application/json"),
    HttpClientRequest.setBody(HttpBody.text(JSON.stringify(body), "application/json"))
  )

const withBearer = (request: HttpClientRequest.HttpClientRequest, config: AdapterConfig) =>
  Option.match(keyOf(config), { onNone: () => request, onSome: (key) => HttpClientRequest.bearerToken(request, key) })

/** The request of one question, and how to read the answer (a string is the provider's own error). */
interface Call {
  readonly request: HttpClientRequest.HttpClientRequest
  readonly decode: (body: unknown) => Effect.Effect<AdapterAnswer | string, ParseResult.ParseError>
  /** A second request the first answer asks for (SerpApi's AI Overview page_token), else null. */
  readonly follow?: (body: unknown) => HttpClientRequest.HttpClientRequest | null
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, read: (a: A) => AdapterAnswer | string) => (body: unknown) =>
  Effect.map(Schema.decodeUnknown(schema)(body), read)

const callOf = (config: AdapterConfig, prompt: string): Call => {
  const base = trimBase(config.baseUrl)
  switch (config.protocol) {
    case "openai-responses":
    case "xai":
      return {
        request: withBearer(jsonPost(`${base}/responses`, { model: config.model, input: prompt, tools: [{ type: "web_search" }] }), config),
        decode: decodeWith(ResponsesBody, fromResponses)
      }
    case "openai":
    case "openai-chat":
      return {
        request: withBearer(jsonPost(`${base}/chat/completions`, { model: config.model, messages: [{ role: "user", content: prompt }] }), config),
        decode: decodeWith(ChatBody, fromChat)
      }
    case "perplexity":
      return {
        request: withBearer(jsonPost(`${base}/chat/completions`, { model: config.model, messages: [{ role: "user", content: prompt }] }), config),
        decode: decodeWith(ChatBody, fromPerplexity)
      }
    case "anthropic": {
      let request = jsonPost(`${base}/messages`, {
        model: config.model,
        max_tokens: 2048,
        messages: [{ role: "user", content: prompt }],
        tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }]
      }).pipe(HttpClientRequest.setHeader("anthropic-version", "2023-06-01"))
      if (Option.isSome(config.apiKey)) request = HttpClientRequest.setHeader(request, "x-api-key", Redacted.value(config.apiKey.value))
      return { request, decode: decodeWith(AnthropicBody, fromAnthropic) }
    }
    case "gemini": {
      let request = jsonPost(`${base}/models/${encodeURIComponent(config.model)}:generateContent`, {
        contents: [{ role: "user", parts: [{ text: prompt }] }],
        tools: [{ google_search: {} }]
      })
      if (Option.isSome(config.apiKey)) request = HttpClientRequest.setHeader(request, "x-goog-api-key", Redacted.value(config.apiKey.value))
      return { request, decode: decodeWith(GeminiBody, fromGemini) }
    }
    case "serp": {
      // SerpApi: GET /search.json?engine=<engine>&q=<prompt>&api_key=<key> (its documented key parameter).
      // The AI Overview is a block of Google's results page: engine google, then, when Google lazy-loads
      // it, engine google_ai_overview with the page_token the first answer holds.
      const key: Record<string, string> = Option.isSome(config.apiKey) ? { api_key: Redacted.value(config.apiKey.value) } : {}
      const overview = config.model === "google_ai_overview"
      const search = (params: Record<string, string>) =>
        HttpClientRequest.get(`${base}/search.json`).pipe(HttpClientRequest.setUrlParams({ ...params, ...key }))
      return {
        request: search({ engine: overview ? "google" : config.model, q: prompt, output: "json" }),
        decode: decodeWith(SerpBody, fromSerp),
        follow: (body) => {
          if (!overview) return null
          const decoded = Schema.decodeUnknownOption(SerpBody)(body)
          if (Option.isNone(decoded)) return null
          const block = decoded.value.ai_overview
          return block?.text_blocks === undefined && block?.page_token !== undefined
            ? search({ engine: "google_ai_overview", page_token: block.page_token, output: "json" })
            : null
        }
      }
    }
  }
}

const isRetryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

/** Asks one question with the protocol of `config`. */
export const askWith = (
  config: AdapterConfig,
  client: HttpClient.HttpClient,
  prompt: string
): Effect.Effect<AdapterAnswer, AdapterFailure> =>
  Effect.gen(function*() {
    if (config.protocol === "serp" && config.provider !== undefined && config.provider.toLowerCase() !== "serpapi") {
      return yield* Effect.fail<AdapterFailure>({ message: `unknown SERP provider ${config.provider} (supported: serpapi)`, retryable: false })
    }
    const call = callOf(config, prompt)
    const first = yield* fetchJson(client, call.request, config.timeout)
    const second = call.follow?.(first.body) ?? null
    const { body, status } = second === null ? first : yield* fetchJson(client, second, config.timeout)
    const answer = yield* call.decode(body).pipe(
      Effect.mapError((e): AdapterFailure => ({
        message: `unexpected response shape: ${ParseResult.TreeFormatter.formatErrorSync(e).slice(0, 300)}`,
        retryable: false,
        status
      }))
    )
    if (typeof answer === "string") return yield* Effect.fail<AdapterFailure>({ message: `no answer: ${answer.slice(0, 200)}`, retryable: false })
    return answer
  })

/** One provider request: its JSON body, or the failure it is (status, Retry-After, timeout, not JSON). */
const fetchJson = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.Duration
): Effect.Effect<{ readonly body: unknown; readonly status: number }, AdapterFailure> =>
  Effect.gen(function*() {
    const fail = (failure: AdapterFailure) => Effect.fail(failure)
    const timedOut = (): AdapterFailure => ({ message: `timed out after ${Duration.format(timeout)}`, retryable: true })
    const response = yield* client.execute(request).pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }),
      Effect.catchTags({
        RequestError: (e) => fail({ message: `request failed: ${e.message}`, retryable: true }),
        ResponseError: (e) => fail({ message: `bad response: ${e.message}`, retryable: true })
      }),
      Effect.scoped
    )
    const text = yield* response.text.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }),
      Effect.catchTag("ResponseError", (e) => fail({ message: `cannot read the response: ${e.message}`, retryable: true }))
    )
    if (response.status < 200 || response.status >= 300) {
      return yield* fail({
        message: `HTTP ${response.status}: ${text.slice(0, 200)}`,
        retryable: isRetryableStatus(response.status),
        status: response.status,
        retryAfterMs: retryAfterMs(response.headers["retry-after"])
      })
    }
    try {
      return { body: JSON.parse(text) as unknown, status: response.status }
    } catch {
      return yield* fail({ message: "the response is not JSON", retryable: false, status: response.status })
    }
  })
