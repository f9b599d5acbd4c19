import { FetchHttpClient, HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, ParseResult, Redacted, Schema } from "effect"

/**
 * One adapter per engine protocol (docs/observations.md, "Engine adapters"): each builds the
 * provider's plain (non-streaming) request, sends the key the way the provider documents it, and
 * decodes the provider's JSON with a Schema into an answer, its own cited sources, the searches the
 * engine ran (fan-outs, with their sources where the provider links them) and the tokens used.
 * Failures are values with a reason: 401/403 are final, 408/429/5xx/timeouts/network errors are
 * retryable and a 429's wait (Retry-After, or Google's RetryInfo in the body) is kept so that the
 * scanner never retries sooner. An answer the engine did not give (refused, blocked, incomplete,
 * empty) is a failure too, never an answer: it must not count in any n ("Reading real answers").
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

/** Why a call gave no observation; the scan status counts failures by these (docs/observations.md). */
export const FAILURE_REASONS = [
  "refused",
  "blocked",
  "incomplete",
  "empty",
  "insufficient_quota",
  "unauthorized",
  "rate_limited",
  "provider_error",
  "timeout",
  "network",
  "bad_response",
  "config",
  "skipped"
] as const
export type FailureReason = (typeof FAILURE_REASONS)[number]

/** The reasons of an answer the engine did not give (the provider did answer): never retried. */
export const NON_ANSWER_REASONS: ReadonlySet<FailureReason> = new Set(["refused", "blocked", "incomplete", "empty"])

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

/** An answer the engine did not give, with its reason and the provider's own words for it. */
export interface NonAnswer {
  readonly _tag: "NonAnswer"
  readonly reason: "refused" | "blocked" | "incomplete" | "empty"
  readonly detail: string
}

const nonAnswer = (reason: NonAnswer["reason"], detail: string): NonAnswer => ({ _tag: "NonAnswer", reason, detail })
const isNonAnswer = (read: AdapterAnswer | NonAnswer): read is NonAnswer => "_tag" in read

export interface AdapterFailure {
  readonly message: string
  readonly retryable: boolean
  readonly reason: FailureReason
  /** HTTP status, when the provider answered. */
  readonly status?: number | undefined
  /** From a 429/503's Retry-After (or Google's RetryInfo): the earliest retry, in milliseconds. */
  readonly retryAfterMs?: number | undefined
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const URL_IN_TEXT = /https?:\/\/[^\s<>()[\]"'`]+/g

/**
 * A citation URL without tracking parameters (query parameters named `utm_*`, e.g. OpenAI's
 * utm_source=openai) and without its fragment; the rest exactly as given.
 */
export const cleanUrl = (raw: string): string => {
  const hash = raw.indexOf("#")
  const url = hash < 0 ? raw : raw.slice(0, hash)
  const mark = url.indexOf("?")
  if (mark < 0) return url
  const kept = url.slice(mark + 1).split("&").filter((pair) => pair !== "" && !pair.toLowerCase().startsWith("utm_"))
  return kept.length === 0 ? url.slice(0, mark) : `${url.slice(0, mark)}?${kept.join("&")}`
}

/** Distinct cleaned URLs in order, trailing punctuation dropped. */
export const uniqueUrls = (urls: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  const seen = new Set<string>()
  for (const raw of urls) {
    const url = cleanUrl(raw.trim().replace(/[.,;:!?]+$/, ""))
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

/** A protobuf Duration as JSON (`"37s"`, `"1.5s"`), in milliseconds; undefined when unreadable. */
export const durationMs = (value: string | undefined): number | undefined => {
  const match = value === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(value.trim())
  return match === null ? undefined : Math.ceil(Number(match[1]) * 1000)
}

const Int = Schema.optional(Schema.NullOr(Schema.Number))
const num = (x: number | null | undefined) => x ?? 0

/** An answer with no text at all is not an answer. */
const answerOrEmpty = (answer: AdapterAnswer, what: string): AdapterAnswer | NonAnswer =>
  answer.response.trim() === "" ? nonAnswer("empty", `the ${what} holds no answer text`) : answer

// ---------------------------------------------------------------------------
// OpenAI Responses API (also xAI's): output items, url_citation annotations, web_search_call queries
// ---------------------------------------------------------------------------

const UrlCitation = Schema.Struct({ type: Schema.Literal("url_citation"), url: Schema.String })
const OtherAnnotation = Schema.Struct({ type: Schema.String })
const ResponsesContent = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  refusal: Schema.optional(Schema.String),
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
  status: Schema.optional(Schema.NullOr(Schema.String)),
  incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) }))),
  error: Schema.optional(Schema.NullOr(Schema.Struct({ message: Schema.optional(Schema.String) }))),
  output: Schema.Array(ResponsesOutputItem),
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ input_tokens: Int, output_tokens: Int })))
})

const isUrlCitation = (a: { readonly type: string }): a is typeof UrlCitation.Type => a.type === "url_citation" && "url" in a

/**
 * OpenAI: the answer's citations are its url_citation annotations (else the URLs in its text).
 * xAI (`visited`): the annotations and the links written in the text; its top-level `citations` list is
 * every source the search visited, so it goes with the fan-outs (the searches), not with the answer.
 */
export const fromResponses = (
  body: typeof ResponsesBody.Type,
  options: { readonly xai: boolean; readonly prompt: string }
): AdapterAnswer | NonAnswer => {
  if (body.status === "incomplete") {
    return nonAnswer("incomplete", `the response is incomplete (${body.incomplete_details?.reason ?? "no reason given"})`)
  }
  if (body.status === "failed") return nonAnswer("incomplete", `the response failed: ${body.error?.message ?? "no message"}`)
  const texts: Array<string> = []
  const refusals: Array<string> = []
  const cited: Array<string> = []
  const fanouts: Array<{ sub_question: string; citations: Array<string> }> = []
  for (const item of body.output) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "refusal") refusals.push(part.refusal ?? "")
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
  if (refusals.length > 0) return nonAnswer("refused", `the model refused: ${refusals.join(" ").slice(0, 200)}`)
  const response = texts.join("\n\n")
  const usage = body.usage ? { inputTokens: num(body.usage.input_tokens), outputTokens: num(body.usage.output_tokens), costUsd: null } : undefined
  if (!options.xai) {
    return answerOrEmpty({ response, citations: uniqueUrls(cited.length > 0 ? cited : urlsInText(response)), fanouts, usage }, "response")
  }
  const visited = uniqueUrls(body.citations ?? [])
  // xAI does not say which search visited which source: each search without sources of its own
  // carries the whole list; with no search listed, one fan-out under the prompt itself does.
  const withVisited = visited.length === 0
    ? fanouts
    : fanouts.length === 0
    ? [{ sub_question: options.prompt, citations: visited }]
    : fanouts.map((f) => (f.citations.length > 0 ? f : { ...f, citations: visited }))
  return answerOrEmpty({ response, citations: uniqueUrls([...cited, ...urlsInText(response)]), fanouts: withVisited, usage }, "response")
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
    finish_reason: Schema.optional(Schema.NullOr(Schema.String)),
    message: Schema.Struct({
      content: ChatContent,
      refusal: Schema.optional(Schema.NullOr(Schema.String)),
      annotations: Schema.optional(Schema.NullOr(Schema.Array(ChatAnnotation)))
    })
  })),
  citations: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  search_results: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ url: Schema.String })))),
  usage: Schema.optional(Schema.NullOr(ChatUsage))
})

const chatText = (content: typeof ChatContent.Type) =>
  content === null ? "" : typeof content === "string" ? content : content.map((part) => part.text ?? "").join("")

const chatUsage = (usage: typeof ChatUsage.Type | null | undefined): TokenUsage | undefined =>
  usage ? { inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens), costUsd: usage.cost?.total_cost ?? null } : undefined

/** A refusal, a content filter, or a truncation that left no text: not an answer. */
const chatNonAnswer = (choice: (typeof ChatBody.Type)["choices"][0], text: string): NonAnswer | null => {
  const refusal = choice.message.refusal
  if (refusal !== undefined && refusal !== null && refusal !== "") return nonAnswer("refused", `the model refused: ${refusal.slice(0, 200)}`)
  if (choice.finish_reason === "content_filter") return nonAnswer("blocked", "the answer was blocked (finish_reason content_filter)")
  if (choice.finish_reason === "length" && text.trim() === "") return nonAnswer("incomplete", "the answer was cut off before any text (finish_reason length)")
  return null
}

/** OpenAI-compatible: url_citation annotations, else a top-level citations list, else URLs in the text. */
export const fromChat = (body: typeof ChatBody.Type): AdapterAnswer | NonAnswer => {
  const choice = body.choices[0]
  const response = chatText(choice.message.content)
  const not = chatNonAnswer(choice, response)
  if (not !== null) return not
  const annotations = (choice.message.annotations ?? []).flatMap((a) => {
    const url = a.url_citation?.url ?? (a.type === "url_citation" ? a.url : undefined)
    return url === undefined ? [] : [url]
  })
  const topLevel = body.citations ?? []
  const citations = annotations.length > 0 ? annotations : topLevel.length > 0 ? topLevel : urlsInText(response)
  return answerOrEmpty({ response, citations: uniqueUrls(citations), fanouts: [], usage: chatUsage(body.usage) }, "message")
}

/**
 * Reasoning models (sonar-reasoning) write their reasoning first, between <think> and </think>: it is
 * not the answer. An opening tag never closed means the answer never came.
 */
export const withoutThinking = (text: string): string => {
  let out = text.replace(/<think>[\s\S]*?<\/think>/g, "")
  const open = out.indexOf("<think>")
  if (open >= 0) out = out.slice(0, open)
  return out.trim()
}

/** Perplexity Sonar: the top-level citations list, else search_results[].url. It does not expose its queries. */
export const fromPerplexity = (body: typeof ChatBody.Type): AdapterAnswer | NonAnswer => {
  const choice = body.choices[0]
  const response = withoutThinking(chatText(choice.message.content))
  const not = chatNonAnswer(choice, response)
  if (not !== null) return not
  const citations = (body.citations ?? []).length > 0 ? body.citations! : (body.search_results ?? []).map((r) => r.url)
  return answerOrEmpty({ response, citations: uniqueUrls(citations), fanouts: [], usage: chatUsage(body.usage) }, "message")
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
const AnthropicUsage = Schema.Struct({ input_tokens: Int, output_tokens: Int })
export const AnthropicBody = Schema.Struct({
  content: Schema.Array(AnthropicBlock),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(AnthropicUsage)
})
/** The same body with its content kept as sent: a paused turn is sent back as it came. */
const AnthropicRaw = Schema.Struct({
  content: Schema.Array(Schema.Unknown),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(AnthropicUsage)
})

/** How many times a paused turn (stop_reason pause_turn) is continued before it counts as incomplete. */
export const ANTHROPIC_MAX_CONTINUATIONS = 3

/**
 * The answer is the text blocks after the last web search result, joined as sent (the API splits one
 * answer into blocks at each citation); text before it is the model's narration of its searches.
 */
export const fromAnthropic = (body: typeof AnthropicBody.Type): AdapterAnswer | NonAnswer => {
  if (body.stop_reason === "refusal") return nonAnswer("refused", "the model refused (stop_reason refusal)")
  if (body.stop_reason === "pause_turn") {
    return nonAnswer("incomplete", `the search loop was still paused after ${ANTHROPIC_MAX_CONTINUATIONS} continuations (stop_reason pause_turn)`)
  }
  const lastResult = body.content.reduce((last, block, i) => (block.type === "web_search_tool_result" ? i : last), -1)
  const texts: Array<string> = []
  const cited: Array<string> = []
  const queries: Array<{ id: string; query: string }> = []
  const results = new Map<string, Array<string>>()
  body.content.forEach((block, i) => {
    if (block.type === "text" && block.text !== undefined) {
      if (i < lastResult) return
      texts.push(block.text)
      for (const c of block.citations ?? []) if (c.url !== undefined) cited.push(c.url)
    } else if (block.type === "server_tool_use" && block.name === "web_search" && block.input?.query !== undefined) {
      queries.push({ id: block.id ?? "", query: block.input.query })
    } else if (block.type === "web_search_tool_result" && block.tool_use_id !== undefined && Array.isArray(block.content)) {
      results.set(block.tool_use_id, block.content.flatMap((r) => (r.type === "web_search_result" && r.url !== undefined ? [r.url] : [])))
    }
  })
  const response = texts.join("")
  if (response.trim() === "" && (body.stop_reason === "max_tokens" || body.stop_reason === "model_context_window_exceeded")) {
    return nonAnswer("incomplete", `the answer was cut off before any text (stop_reason ${body.stop_reason})`)
  }
  return answerOrEmpty({
    response,
    citations: uniqueUrls(cited.length > 0 ? cited : urlsInText(response)),
    fanouts: queries.map((q) => ({ sub_question: q.query, citations: uniqueUrls(results.get(q.id) ?? []) })),
    usage: body.usage ? { inputTokens: num(body.usage.input_tokens), outputTokens: num(body.usage.output_tokens), costUsd: null } : undefined
  }, "message")
}

// ---------------------------------------------------------------------------
// Gemini generateContent with Google Search grounding
// ---------------------------------------------------------------------------

const GeminiWeb = Schema.Struct({
  uri: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  domain: Schema.optional(Schema.String)
})
export const GeminiBody = Schema.Struct({
  // Absent when the prompt itself was blocked (promptFeedback says why).
  candidates: Schema.optional(Schema.Array(Schema.Struct({
    content: Schema.optional(Schema.Struct({
      parts: Schema.optional(Schema.Array(Schema.Struct({ text: Schema.optional(Schema.String), thought: Schema.optional(Schema.Boolean) })))
    })),
    finishReason: Schema.optional(Schema.String),
    groundingMetadata: Schema.optional(Schema.Struct({
      webSearchQueries: Schema.optional(Schema.Array(Schema.String)),
      groundingChunks: Schema.optional(Schema.Array(Schema.Struct({ web: Schema.optional(GeminiWeb) })))
    }))
  }))),
  promptFeedback: Schema.optional(Schema.Struct({
    blockReason: Schema.optional(Schema.String),
    blockReasonMessage: Schema.optional(Schema.String)
  })),
  usageMetadata: Schema.optional(Schema.Struct({
    promptTokenCount: Int,
    candidatesTokenCount: Int,
    thoughtsTokenCount: Int,
    toolUsePromptTokenCount: Int
  }))
})

/** Candidate finish reasons that mean the answer was withheld. */
const GEMINI_BLOCKED = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT"])

const REDIRECT_HOST = "vertexaisearch.cloud.google.com"
/** Google's grounding redirect (vertexaisearch.cloud.google.com/grounding-api-redirect/...): never a source. */
export const isGroundingRedirect = (uri: string): boolean => {
  try {
    const url = new URL(uri)
    return url.hostname === REDIRECT_HOST && url.pathname.startsWith("/grounding-api-redirect/")
  } catch {
    return false
  }
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i

/** A grounding chunk's source: its URI, a resolved redirect, else `https://<domain>/` from its title; null = dropped. */
type Resolve = (uri: string) => Effect.Effect<string | null>

const chunkSource = (web: typeof GeminiWeb.Type, resolve: Resolve): Effect.Effect<string | null> => {
  const fallback = () => {
    const name = (web.domain ?? web.title ?? "").trim().toLowerCase()
    return DOMAIN.test(name) ? `https://${name}/` : null
  }
  if (web.uri === undefined || web.uri === "") return Effect.succeed(fallback())
  if (!isGroundingRedirect(web.uri)) return Effect.succeed(web.uri)
  return Effect.map(resolve(web.uri), (resolved) => resolved ?? fallback())
}

/** Grounding chunks are the citations; Gemini does not link its search queries to chunks, so fan-outs carry none. */
export const fromGemini = (body: typeof GeminiBody.Type, resolve: Resolve): Effect.Effect<AdapterAnswer | NonAnswer> =>
  Effect.gen(function*() {
    const blockReason = body.promptFeedback?.blockReason
    if (blockReason !== undefined && blockReason !== "BLOCKED_REASON_UNSPECIFIED") {
      const message = body.promptFeedback?.blockReasonMessage
      return nonAnswer("blocked", `the prompt was blocked (promptFeedback.blockReason ${blockReason})${message ? `: ${message.slice(0, 200)}` : ""}`)
    }
    const candidate = body.candidates?.[0]
    if (candidate === undefined) return nonAnswer("empty", "the response holds no candidate")
    const finish = candidate.finishReason ?? ""
    if (GEMINI_BLOCKED.has(finish)) return nonAnswer("blocked", `the answer was blocked (finishReason ${finish})`)
    const response = (candidate.content?.parts ?? []).filter((p) => p.thought !== true).map((p) => p.text ?? "").join("")
    if (response.trim() === "" && finish === "MAX_TOKENS") return nonAnswer("incomplete", "the answer was cut off before any text (finishReason MAX_TOKENS)")
    const grounding = candidate.groundingMetadata
    const webs = (grounding?.groundingChunks ?? []).flatMap((c) => (c.web === undefined ? [] : [c.web]))
    // Resolutions run at most 8 at once over the engine (the resolver's own bound).
    const sources = yield* Effect.forEach(webs, (web) => chunkSource(web, resolve), { concurrency: "unbounded" })
    const chunks = sources.filter((s): s is string => s !== null && !isGroundingRedirect(s))
    const usage = body.usageMetadata
    return answerOrEmpty({
      response,
      citations: uniqueUrls(webs.length > 0 ? chunks : urlsInText(response).filter((u) => !isGroundingRedirect(u))),
      fanouts: (grounding?.webSearchQueries ?? []).filter((q) => q.trim() !== "").map((q) => ({ sub_question: q, citations: [] })),
      usage: usage
        ? {
          inputTokens: num(usage.promptTokenCount) + num(usage.toolUsePromptTokenCount),
          outputTokens: num(usage.candidatesTokenCount) + num(usage.thoughtsTokenCount),
          costUsd: null
        }
        : undefined
    }, "candidate")
  })

/** Resolutions remembered per engine (a redirect always leads to the same source); oldest forgotten first. */
const RESOLVED_CACHE = 10_000
/** A pair longer than this (redirect + source, characters) is used but not remembered: the cache stays small. */
const RESOLVED_MAX_CHARS = 4096
const RESOLVE_CONCURRENCY = 8

/**
 * Resolves grounding redirects: one GET that does not follow redirects; the Location of a 30x answer is
 * the source. Cached, at most 8 in flight; anything else (another status, no Location, a timeout) is null.
 */
export const makeRedirectResolver = (client: HttpClient.HttpClient, timeout: Duration.Duration): Resolve => {
  const cache = new Map<string, string | null>()
  const permits = Effect.unsafeMakeSemaphore(RESOLVE_CONCURRENCY)
  const bound = Duration.min(timeout, Duration.seconds(10))
  const lookup = (uri: string) =>
    client.execute(HttpClientRequest.get(uri)).pipe(
      Effect.map((response) => {
        const location = response.headers["location"]
        if (response.status < 300 || response.status >= 400 || location === undefined) return null
        try {
          const target = new URL(location, uri)
          return target.protocol === "http:" || target.protocol === "https:" ? target.toString() : null
        } catch {
          return null
        }
      }),
      Effect.scoped,
      Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
      Effect.timeout(bound),
      Effect.orElseSucceed(() => null)
    )
  return (uri) =>
    Effect.suspend(() => {
      if (cache.has(uri)) return Effect.succeed(cache.get(uri) ?? null)
      return permits.withPermits(1)(lookup(uri)).pipe(
        Effect.tap((resolved) =>
          Effect.sync(() => {
            // A failed resolution is not remembered: the next answer tries again.
            if (resolved === null || uri.length + resolved.length > RESOLVED_MAX_CHARS) return
            if (cache.size >= RESOLVED_CACHE) cache.delete(cache.keys().next().value!)
            cache.set(uri, resolved)
          })
        )
      )
    })
}

// ---------------------------------------------------------------------------
// SERP API (SerpApi's Google AI Overview, Google AI Mode, Bing Copilot engines)
// ---------------------------------------------------------------------------

interface SerpTextBlock {
  readonly type?: string | undefined
  readonly title?: string | undefined
  readonly snippet?: string | undefined
  readonly reference_indexes?: ReadonlyArray<number> | undefined
  readonly list?: ReadonlyArray<SerpTextBlock> | undefined
  readonly text_blocks?: ReadonlyArray<SerpTextBlock> | undefined
}
const SerpTextBlock: Schema.Schema<SerpTextBlock> = Schema.Struct({
  type: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
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

/** A block's text as the page shows it: a list item's title, then its snippet. */
const blockText = (b: SerpTextBlock): Array<string> => {
  const text = [b.title, b.snippet].filter((t): t is string => t !== undefined && t.trim() !== "").join(" ")
  return text === "" ? [] : [text]
}

const blockTexts = (blocks: ReadonlyArray<SerpTextBlock>): Array<string> =>
  blocks.flatMap((b) => [...blockText(b), ...blockTexts(b.list ?? []), ...blockTexts(b.text_blocks ?? [])])

/**
 * The answer's text blocks joined; references in the provider's order are the citations. No fan-outs
 * are exposed. A string is a failure: the provider's `error`; no answer block at all is an empty answer.
 */
export const fromSerp = (body: typeof SerpBody.Type): AdapterAnswer | NonAnswer | string => {
  if (body.error !== undefined) return body.error
  // No answer block (the page showed no AI answer, or another shape): not stored as an empty answer.
  if (body.text_blocks === undefined && body.ai_overview?.text_blocks === undefined) return nonAnswer("empty", "the response holds no AI answer (text_blocks)")
  const answer = body.text_blocks !== undefined ? body : body.ai_overview ?? {}
  const response = blockTexts(answer.text_blocks ?? []).join("\n")
  return answerOrEmpty({ response, citations: uniqueUrls((answer.references ?? []).map((r) => r.link)), fanouts: [] }, "AI answer")
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

type Read = AdapterAnswer | NonAnswer | string

/** A further request the answer so far asks for, and how its body joins the one before. */
interface Next {
  readonly request: HttpClientRequest.HttpClientRequest
  readonly merge: (previous: unknown, next: unknown) => unknown
}

/** The request of one question, and how to read the answer (a string is the provider's own error). */
interface Call {
  readonly request: HttpClientRequest.HttpClientRequest
  readonly decode: (body: unknown) => Effect.Effect<Read, ParseResult.ParseError>
  /** A further request (SerpApi's AI Overview page_token, Anthropic's paused turn), else null. */
  readonly next?: (body: unknown, round: number) => Next | null
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, read: (a: A) => Read) => (body: unknown) =>
  Effect.map(Schema.decodeUnknown(schema)(body), read)

const replace = (_previous: unknown, next: unknown) => next

const callOf = (config: AdapterConfig, prompt: string, resolve: Resolve): Call => {
  const base = trimBase(config.baseUrl)
  switch (config.protocol) {
    case "openai-responses":
      return {
        // Without `include`, the API leaves out the sources of its searches (the fan-outs' citations).
        request: withBearer(
          jsonPost(`${base}/responses`, { model: config.model, input: prompt, tools: [{ type: "web_search" }], include: ["web_search_call.action.sources"] }),
          config
        ),
        decode: decodeWith(ResponsesBody, (body) => fromResponses(body, { xai: false, prompt }))
      }
    case "xai":
      return {
        request: withBearer(jsonPost(`${base}/responses`, { model: config.model, input: prompt, tools: [{ type: "web_search" }] }), config),
        decode: decodeWith(ResponsesBody, (body) => fromResponses(body, { xai: true, prompt }))
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
      const messages = (assistant: ReadonlyArray<unknown> | null) => {
        let request = jsonPost(`${base}/messages`, {
          model: config.model,
          max_tokens: 2048,
          messages: assistant === null
            ? [{ role: "user", content: prompt }]
            : [{ role: "user", content: prompt }, { role: "assistant", content: assistant }],
          tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }]
        }).pipe(HttpClientRequest.setHeader("anthropic-version", "2023-06-01"))
        if (Option.isSome(config.apiKey)) request = HttpClientRequest.setHeader(request, "x-api-key", Redacted.value(config.apiKey.value))
        return request
      }
      return {
        request: messages(null),
        decode: decodeWith(AnthropicBody, fromAnthropic),
        // pause_turn: the search loop paused; the turn goes back as it came (the assistant content
        // appended) and the continuation's blocks follow the ones before.
        next: (body, round) => {
          const paused = Schema.decodeUnknownOption(AnthropicRaw)(body)
          if (Option.isNone(paused) || paused.value.stop_reason !== "pause_turn" || round >= ANTHROPIC_MAX_CONTINUATIONS) return null
          return {
            request: messages(paused.value.content),
            merge: (previous, next) => {
              const before = Schema.decodeUnknownOption(AnthropicRaw)(previous)
              const after = Schema.decodeUnknownOption(AnthropicRaw)(next)
              if (Option.isNone(before) || Option.isNone(after)) return next
              const sum = (pick: (u: typeof AnthropicUsage.Type) => number | null | undefined) =>
                num(before.value.usage ? pick(before.value.usage) : 0) + num(after.value.usage ? pick(after.value.usage) : 0)
              return {
                content: [...before.value.content, ...after.value.content],
                stop_reason: after.value.stop_reason,
                usage: { input_tokens: sum((u) => u.input_tokens), output_tokens: sum((u) => u.output_tokens) }
              }
            }
          }
        }
      }
    }
    case "gemini": {
      let request = jsonPost(`${base}/models/${encodeURIComponent(config.model)}:generateContent`, {
        contents: [{ role: "user", parts: [{ text: prompt }] }],
        tools: [{ google_search: {} }]
      })
      if (Option.isSome(config.apiKey)) request = HttpClientRequest.setHeader(request, "x-goog-api-key", Redacted.value(config.apiKey.value))
      return { request, decode: (body) => Effect.flatMap(Schema.decodeUnknown(GeminiBody)(body), (decoded) => fromGemini(decoded, resolve)) }
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
        next: (body, round) => {
          if (!overview || round > 0) return null
          const decoded = Schema.decodeUnknownOption(SerpBody)(body)
          if (Option.isNone(decoded)) return null
          const block = decoded.value.ai_overview
          return block?.text_blocks === undefined && block?.page_token !== undefined
            ? { request: search({ engine: "google_ai_overview", page_token: block.page_token, output: "json" }), merge: replace }
            : null
        }
      }
    }
  }
}

const isRetryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

/** Asks one question with the protocol of `config` (`resolve`: Gemini's grounding redirects, cached per engine). */
export const askWith = (
  config: AdapterConfig,
  client: HttpClient.HttpClient,
  prompt: string,
  resolve: Resolve = makeRedirectResolver(client, config.timeout)
): Effect.Effect<AdapterAnswer, AdapterFailure> =>
  Effect.gen(function*() {
    if (config.protocol === "serp" && config.provider !== undefined && config.provider.toLowerCase() !== "serpapi") {
      return yield* Effect.fail<AdapterFailure>({ message: `unknown SERP provider ${config.provider} (supported: serpapi)`, retryable: false, reason: "config" })
    }
    const call = callOf(config, prompt, resolve)
    let { body, status } = yield* fetchJson(client, call.request, config.timeout)
    for (let round = 0; ; round++) {
      const next = call.next?.(body, round) ?? null
      if (next === null) break
      const more = yield* fetchJson(client, next.request, config.timeout)
      body = next.merge(body, more.body)
      status = more.status
    }
    const read = yield* call.decode(body).pipe(
      Effect.mapError((e): AdapterFailure => ({
        message: `unexpected response shape: ${ParseResult.TreeFormatter.formatErrorSync(e).slice(0, 300)}`,
        retryable: false,
        reason: "bad_response",
        status
      }))
    )
    if (typeof read === "string") {
      return yield* Effect.fail<AdapterFailure>({ message: `no answer: ${read.slice(0, 200)}`, retryable: false, reason: "provider_error", status })
    }
    if (isNonAnswer(read)) {
      return yield* Effect.fail<AdapterFailure>({ message: `${read.reason}: ${read.detail}`, retryable: false, reason: read.reason, status })
    }
    return read
  })

/** The error body providers send: OpenAI's `{error: {code, type, message}}`, Google's `{error: {details: [RetryInfo]}}`. */
const ProviderError = Schema.Struct({
  error: Schema.Struct({
    code: Schema.optional(Schema.Unknown),
    type: Schema.optional(Schema.Unknown),
    message: Schema.optional(Schema.Unknown),
    details: Schema.optional(Schema.Array(Schema.Struct({ "@type": Schema.optional(Schema.String), retryDelay: Schema.optional(Schema.String) })))
  })
})

const providerError = (text: string) => {
  try {
    return Option.getOrNull(Schema.decodeUnknownOption(ProviderError)(JSON.parse(text)))?.error ?? null
  } catch {
    return null
  }
}

/** What a non-2xx answer means: its reason, whether to retry, and the earliest retry. */
const httpFailure = (status: number, text: string, headers: Record<string, string | undefined>): AdapterFailure => {
  const error = providerError(text)
  // OpenAI: a 429 with code insufficient_quota is the account's billing, not a rate: retrying cannot help.
  if (status === 429 && error !== null && (error.code === "insufficient_quota" || error.type === "insufficient_quota")) {
    const said = typeof error.message === "string" ? `: ${error.message.slice(0, 160)}` : ""
    return {
      message: `HTTP 429 insufficient_quota: the provider account's quota or billing is spent, not retried${said}`,
      retryable: false,
      reason: "insufficient_quota",
      status
    }
  }
  // Google sends its wait in the body (google.rpc.RetryInfo), e.g. {"retryDelay": "37s"}.
  const retryInfo = (error?.details ?? []).find((d) => (d["@type"] ?? "").endsWith("google.rpc.RetryInfo"))
  const wait = retryAfterMs(headers["retry-after"]) ?? durationMs(retryInfo?.retryDelay)
  return {
    message: `HTTP ${status}: ${text.slice(0, 200)}`,
    retryable: isRetryableStatus(status),
    reason: status === 401 || status === 403 ? "unauthorized" : status === 429 ? "rate_limited" : "provider_error",
    status,
    retryAfterMs: wait
  }
}

/** One provider request: its JSON body, or the failure it is (status, Retry-After, timeout, not JSON). */
const fetchJson = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  timeout: Duration.Duration
): Effect.Effect<{ readonly body: unknown; readonly status: number }, AdapterFailure> =>
  Effect.gen(function*() {
    const fail = (failure: AdapterFailure) => Effect.fail(failure)
    const timedOut = (): AdapterFailure => ({ message: `timed out after ${Duration.format(timeout)}`, retryable: true, reason: "timeout" })
    const response = yield* client.execute(request).pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }),
      Effect.catchTags({
        RequestError: (e) => fail({ message: `request failed: ${e.message}`, retryable: true, reason: "network" }),
        ResponseError: (e) => fail({ message: `bad response: ${e.message}`, retryable: true, reason: "network" })
      }),
      Effect.scoped
    )
    const text = yield* response.text.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }),
      Effect.catchTag("ResponseError", (e) => fail({ message: `cannot read the response: ${e.message}`, retryable: true, reason: "network" }))
    )
    if (response.status < 200 || response.status >= 300) return yield* fail(httpFailure(response.status, text, response.headers))
    try {
      return { body: JSON.parse(text) as unknown, status: response.status }
    } catch {
      return yield* fail({ message: "the response is not JSON", retryable: false, reason: "bad_response", status: response.status })
    }
  })
