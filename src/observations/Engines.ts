import { HttpClient } from "@effect/platform"
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { ENGINE_SLUGS } from "../platform/Schemas.js"
import {
  type AdapterConfig,
  askWith,
  ENGINE_PROTOCOLS,
  type EngineProtocol,
  FAILURE_REASONS,
  type FailureReason,
  makeRedirectResolver,
  NON_ANSWER_REASONS,
  type TokenUsage
} from "./EngineAdapters.js"

export { ENGINE_PROTOCOLS, type EngineProtocol, FAILURE_REASONS, type FailureReason, NON_ANSWER_REASONS, type TokenUsage }

/**
 * Answer engines behind one interface. Adapters speak an engine's HTTP JSON; which engines run,
 * where and with which model comes from the environment (docs/observations.md). An engine with
 * no configuration is absent from the list: the scanner skips it.
 */

export interface EngineQuestion {
  readonly prompt: string
  readonly region: string
  readonly language: string
}

export interface EngineAnswer {
  readonly response: string
  readonly citations: ReadonlyArray<string>
  readonly fanouts: ReadonlyArray<{ readonly sub_question: string; readonly citations: ReadonlyArray<string> }>
  /** Tokens the provider reports for this answer (and its cost when it reports one). */
  readonly usage?: TokenUsage | undefined
}

/** A failed call; `retryable` for network errors, timeouts, 429 and 5xx. */
export class EngineError extends Schema.TaggedError<EngineError>()("EngineError", {
  engine: Schema.String,
  message: Schema.String,
  retryable: Schema.Boolean,
  /** Why (docs/observations.md, "Failures by reason"); absent = counted as provider_error. */
  reason: Schema.optional(Schema.Literal(...FAILURE_REASONS)),
  /** The provider's HTTP status, when it answered. */
  status: Schema.optional(Schema.Number),
  /** From Retry-After: never retry sooner than this (milliseconds). */
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

export interface AnswerEngine {
  readonly slug: string
  /** The adapter's protocol (docs/observations.md), for bounding concurrency per provider. */
  readonly protocol?: EngineProtocol | undefined
  readonly ask: (question: EngineQuestion) => Effect.Effect<EngineAnswer, EngineError>
}

/** The configured engines (possibly none). */
export class AnswerEngines extends Context.Tag("AnswerEngines")<AnswerEngines, ReadonlyArray<AnswerEngine>>() {}

/** Base URL up to the API version, e.g. https://api.example.com/v1; the adapter adds the API's path. */
export type EngineConfig = AdapterConfig

// ---------------------------------------------------------------------------
// The HTTP adapters (EngineAdapters.ts), behind the AnswerEngine interface
// ---------------------------------------------------------------------------

export const makeHttpEngine = (config: EngineConfig, client: HttpClient.HttpClient): AnswerEngine => {
  // One resolver per engine: Gemini's grounding redirects are resolved once and remembered.
  const resolve = makeRedirectResolver(client, config.timeout)
  return {
    slug: config.slug,
    protocol: config.protocol,
    ask: (question) =>
      askWith(config, client, question.prompt, resolve).pipe(
        Effect.mapError((failure) => new EngineError({ engine: config.slug, ...failure }))
      )
  }
}

// ---------------------------------------------------------------------------
// Configuration from the environment
// ---------------------------------------------------------------------------

const envName = (slug: string) => slug.toUpperCase()

/**
 * ENGINE_<SLUG>_URL and ENGINE_<SLUG>_MODEL configure an engine (both required), with optional
 * ENGINE_<SLUG>_API_KEY, ENGINE_<SLUG>_PROTOCOL (one of ENGINE_PROTOCOLS; default perplexity for
 * the perplexity engine, openai (= openai-chat) for the others) and, for serp, ENGINE_<SLUG>_PROVIDER.
 * ENGINE_TIMEOUT_SECONDS bounds one call (default 60).
 */
export const engineConfigsFromEnv: Config.Config<ReadonlyArray<EngineConfig>> = Config.all({
  timeoutSeconds: Config.integer("ENGINE_TIMEOUT_SECONDS").pipe(Config.withDefault(60)),
  engines: Config.all(
    ENGINE_SLUGS.map((slug) =>
      Config.all({
        url: Config.option(Config.string(`ENGINE_${envName(slug)}_URL`)),
        model: Config.option(Config.string(`ENGINE_${envName(slug)}_MODEL`)),
        apiKey: Config.option(Config.redacted(`ENGINE_${envName(slug)}_API_KEY`)),
        protocol: Config.option(Config.literal(...ENGINE_PROTOCOLS)(`ENGINE_${envName(slug)}_PROTOCOL`)),
        provider: Config.option(Config.string(`ENGINE_${envName(slug)}_PROVIDER`))
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
        timeout: Duration.seconds(Math.max(1, timeoutSeconds)),
        provider: Option.getOrUndefined(e.provider)
      }]
    })
  )
)

/** The engines configured in the environment, over the given HttpClient. */
export const AnswerEnginesLive = Layer.effect(
  AnswerEngines,
  Effect.gen(function*() {
    const configs = yield* engineConfigsFromEnv
    const client = yield* HttpClient.HttpClient
    return configs.map((config) => makeHttpEngine(config, client))
  })
)

export const answerEngines = (engines: ReadonlyArray<AnswerEngine>) => Layer.succeed(AnswerEngines, engines)
