import { FetchHttpClient } from "@effect/platform"
import { Config, Context, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { monthStart } from "../platform/Days.js"
import { now } from "../platform/Time.js"
import { AnswerEngines, AnswerEnginesLive, type AnswerEngine, type EngineError, type FailureReason, NON_ANSWER_REASONS } from "./Engines.js"
import { Observations, type PromptObservation } from "./Observations.js"
import { ObservationsRepo, type DueBrand, type ScanFailure } from "./Repo.js"

/**
 * The scanner: a fiber that wakes every interval (Effect Clock, so a test clock drives it),
 * claims brands whose next_scan_at has passed (moving it by the plan's cadence), asks every
 * monitored prompt of each on every configured engine with bounded concurrency, retries
 * retryable failures with exponential backoff, stores the answers through the same analysis
 * as imports, and records the calls it gave up on without stopping the other engines.
 */

export interface ScannerSettings {
  readonly enabled: boolean
  readonly interval: Duration.Duration
  /** Engine calls in flight per brand. */
  readonly concurrency: number
  /** Retries after the first attempt. */
  readonly retries: number
  readonly retryBase: Duration.Duration
  readonly brandsPerTick: number
  /** Answers asked per (prompt, engine) and cycle: answers vary from run to run. */
  readonly samples: number
  /** Calls in flight per provider (protocol), over all brands of a wake-up. */
  readonly providerConcurrency: number
  /** Tokens an account's scans may use per UTC month; null = no budget. */
  readonly monthlyTokenBudget: number | null
  /** A Retry-After longer than this gives the call up instead of stalling the cycle. */
  readonly maxRetryWait: Duration.Duration
  /**
   * An engine that gave up this many calls in a row (or answered 401/403 or insufficient_quota once) is skipped
   * for the rest of the brand's cycle; an answer it did not give (refused, blocked...) is not the provider failing.
   */
  readonly skipAfterFailures: number
}

export class ScannerConfig extends Context.Tag("ScannerConfig")<ScannerConfig, ScannerSettings>() {}

export const scannerSettingsFromEnv: Config.Config<ScannerSettings> = Config.all({
  enabled: Config.boolean("SCANNER_ENABLED").pipe(Config.withDefault(true)),
  interval: Config.integer("SCANNER_INTERVAL_SECONDS").pipe(Config.withDefault(60), Config.map((s) => Duration.seconds(Math.max(1, s)))),
  concurrency: Config.integer("SCANNER_CONCURRENCY").pipe(Config.withDefault(4), Config.map((n) => Math.max(1, n))),
  retries: Config.integer("ENGINE_RETRIES").pipe(Config.withDefault(3), Config.map((n) => Math.max(0, n))),
  retryBase: Config.integer("ENGINE_RETRY_BASE_MS").pipe(Config.withDefault(1000), Config.map((ms) => Duration.millis(Math.max(1, ms)))),
  brandsPerTick: Config.integer("SCANNER_BRANDS_PER_TICK").pipe(Config.withDefault(10), Config.map((n) => Math.max(1, n))),
  samples: Config.integer("SCAN_SAMPLES").pipe(Config.withDefault(3), Config.map((n) => Math.min(20, Math.max(1, n)))),
  providerConcurrency: Config.integer("SCANNER_PROVIDER_CONCURRENCY").pipe(Config.withDefault(2), Config.map((n) => Math.max(1, n))),
  monthlyTokenBudget: Config.option(Config.integer("SCAN_MONTHLY_TOKEN_BUDGET")).pipe(
    Config.map((budget) => (Option.isSome(budget) && budget.value > 0 ? budget.value : null))
  ),
  maxRetryWait: Config.integer("ENGINE_MAX_RETRY_WAIT_SECONDS").pipe(Config.withDefault(120), Config.map((s) => Duration.seconds(Math.max(1, s)))),
  skipAfterFailures: Config.integer("SCANNER_SKIP_AFTER_FAILURES").pipe(Config.withDefault(3), Config.map((n) => Math.max(1, n)))
})

/** Settings for tests: one sample per (prompt, engine) unless said otherwise. */
export const scannerConfig = (settings: Partial<ScannerSettings> = {}) =>
  Layer.succeed(ScannerConfig, {
    enabled: true,
    interval: Duration.seconds(60),
    concurrency: 4,
    retries: 3,
    retryBase: Duration.seconds(1),
    brandsPerTick: 10,
    samples: 1,
    providerConcurrency: 4,
    monthlyTokenBudget: null,
    maxRetryWait: Duration.seconds(120),
    skipAfterFailures: 3,
    ...settings
  })

export interface ScanReport {
  readonly brands: number
  readonly observations: number
  readonly failures: number
}

/** What one brand's scan did on one engine. */
export interface EngineReport {
  readonly engine: string
  readonly observations: number
  readonly failures: number
  /** The last failure's reason; null when every call succeeded. */
  readonly lastError: string | null
  /** Failed calls per reason (refused, blocked, rate_limited...); empty when none failed. */
  readonly failuresByReason: Readonly<Record<string, number>>
  readonly tokens: number
}

export interface BrandScanReport {
  readonly observations: number
  readonly failures: number
  readonly engines: ReadonlyArray<EngineReport>
  /** Set when the brand was not scanned (the monthly token budget is spent). */
  readonly skipped: string | null
}

/** Calls in flight per provider (protocol, or the engine slug without one), shared by the brands of a wake-up. */
export type ProviderLimits = (engine: AnswerEngine) => Effect.Effect<Effect.Semaphore>

export const makeProviderLimits = (permits: number): Effect.Effect<ProviderLimits> =>
  Effect.sync(() => {
    const semaphores = new Map<string, Effect.Semaphore>()
    return (engine) =>
      Effect.sync(() => {
        const key = engine.protocol ?? engine.slug
        let semaphore = semaphores.get(key)
        if (semaphore === undefined) {
          semaphore = Effect.unsafeMakeSemaphore(permits)
          semaphores.set(key, semaphore)
        }
        return semaphore
      })
  })

/** Why one call gave no observation. */
interface Failed {
  readonly message: string
  readonly reason: FailureReason
}

/**
 * One call with retries: exponential backoff from retryBase, never sooner than the provider's
 * Retry-After; a Retry-After beyond maxRetryWait gives the call up (the next cycle asks again).
 */
const askWithRetry = (engine: AnswerEngine, question: Parameters<AnswerEngine["ask"]>[0], settings: ScannerSettings) =>
  Effect.gen(function*() {
    let attempts = 0
    while (true) {
      attempts++
      const result = yield* Effect.either(engine.ask(question))
      if (Either.isRight(result) || !result.left.retryable || attempts > settings.retries) return { result, attempts }
      const backoff = Duration.toMillis(settings.retryBase) * 2 ** (attempts - 1)
      const wait = Math.max(backoff, result.left.retryAfterMs ?? 0)
      if (wait > Duration.toMillis(settings.maxRetryWait)) return { result, attempts }
      yield* Effect.sleep(Duration.millis(wait))
    }
  })

/**
 * Scans one brand at `at`: every monitored prompt on every engine (or only `onlyEngine`), `samples`
 * times each, the k-th sample stamped at + k seconds so that each is its own observation. A brand
 * whose account spent its monthly token budget is not scanned; the engine statuses say why.
 */
export const scanBrand = (
  due: DueBrand,
  at: Date,
  options: { readonly limits?: ProviderLimits; readonly onlyEngine?: string; readonly samples?: number } = {}
) =>
  Effect.gen(function*() {
    const allEngines = yield* AnswerEngines
    const engines = options.onlyEngine === undefined ? allEngines : allEngines.filter((e) => e.slug === options.onlyEngine)
    const settings = yield* ScannerConfig
    const observations = yield* Observations
    const repo = yield* ObservationsRepo
    const limits = options.limits ?? (yield* makeProviderLimits(settings.providerConcurrency))
    const samples = options.samples ?? settings.samples
    const target = yield* observations.target(due.accountId, due.slug)
    if (settings.monthlyTokenBudget !== null) {
      const used = yield* repo.tokensInMonth(due.accountId, monthStart(at))
      if (used >= settings.monthlyTokenBudget) {
        const reason = `monthly token budget spent: ${used} of ${settings.monthlyTokenBudget} tokens this month; scans resume next month`
        const reports = engines.map((engine): EngineReport => ({
          engine: engine.slug,
          observations: 0,
          failures: 0,
          lastError: reason,
          failuresByReason: {},
          tokens: 0
        }))
        yield* repo.recordEngineStatus(due.accountId, due.id, reports.map((r) => ({ ...r, scannedAt: at })))
        yield* Effect.logWarning(`scanner: brand ${due.slug}: ${reason}`)
        return { observations: 0, failures: 0, engines: reports, skipped: reason } satisfies BrandScanReport
      }
    }
    const prompts = [...target.prompts.values()]
    const tasks = prompts.flatMap((prompt) =>
      engines.flatMap((engine) => Array.from({ length: samples }, (_, sample) => ({ prompt, engine, sample })))
    )
    // Per engine: give-ups in a row, and the reason it is skipped for the rest of this cycle.
    const health = new Map(engines.map((e) => [e.slug, { failedInRow: 0, skipped: null as string | null }]))
    const question = (prompt: (typeof prompts)[number]) => ({
      prompt: prompt.prompt,
      region: target.brand.primaryRegion,
      language: target.brand.primaryLanguage
    })
    const results = yield* Effect.forEach(
      tasks,
      ({ engine, prompt, sample }) =>
        Effect.gen(function*() {
          const state = health.get(engine.slug)!
          const semaphore = yield* limits(engine)
          // Checked once the permit is held: a call queued behind the one that failed is not sent.
          const outcome = yield* semaphore.withPermits(1)(
            Effect.suspend(() => (state.skipped === null ? askWithRetry(engine, question(prompt), settings) : Effect.succeed(null)))
          )
          if (outcome === null) {
            const skipped: Failed = { message: `skipped for this cycle: ${state.skipped}`, reason: "skipped" }
            return { engine, prompt, sample, attempts: 0, result: Either.left(skipped) }
          }
          if (Either.isRight(outcome.result)) {
            state.failedInRow = 0
            return { engine, prompt, sample, attempts: outcome.attempts, result: Either.right(outcome.result.right) }
          }
          const error: EngineError = outcome.result.left
          const reason: FailureReason = error.reason ?? "provider_error"
          // A refused, blocked, incomplete or empty answer is that prompt's, not the provider failing.
          if (NON_ANSWER_REASONS.has(reason)) {
            state.failedInRow = 0
          } else {
            state.failedInRow++
          }
          const final = error.status === 401 || error.status === 403 || reason === "insufficient_quota"
          if (state.skipped === null && (final || state.failedInRow >= settings.skipAfterFailures)) {
            state.skipped = error.message.slice(0, 300)
          }
          const failed: Failed = { message: error.message, reason }
          return { engine, prompt, sample, attempts: outcome.attempts, result: Either.left(failed) }
        }),
      { concurrency: settings.concurrency }
    )
    const byEngine = new Map<string, { answers: Array<PromptObservation>; failures: Array<ScanFailure>; tokens: number }>(
      engines.map((e) => [e.slug, { answers: [], failures: [], tokens: 0 }])
    )
    for (const { attempts, engine, prompt, result, sample } of results) {
      const bucket = byEngine.get(engine.slug)!
      if (Either.isRight(result)) {
        bucket.answers.push({
          ...result.right,
          promptId: prompt.id,
          engine: engine.slug,
          region: target.brand.primaryRegion,
          language: target.brand.primaryLanguage,
          observedAt: new Date(at.getTime() + sample * 1000)
        })
        bucket.tokens += (result.right.usage?.inputTokens ?? 0) + (result.right.usage?.outputTokens ?? 0)
      } else {
        bucket.failures.push({
          accountId: due.accountId,
          brandId: due.id,
          promptId: prompt.id,
          engine: engine.slug,
          attempts,
          error: result.left.message.slice(0, 1000),
          reason: result.left.reason,
          failedAt: at
        })
      }
    }
    const reports: Array<EngineReport> = []
    for (const engine of engines) {
      const bucket = byEngine.get(engine.slug)!
      const stored = yield* observations.record(target, bucket.answers, "scan")
      const failuresByReason: Record<string, number> = {}
      for (const failure of bucket.failures) failuresByReason[failure.reason] = (failuresByReason[failure.reason] ?? 0) + 1
      reports.push({
        engine: engine.slug,
        observations: stored.inserted,
        failures: bucket.failures.length,
        lastError: bucket.failures.at(-1)?.error ?? null,
        failuresByReason,
        tokens: bucket.tokens
      })
    }
    // Failures after every answer is stored (a reader seeing the failures sees the cycle's answers too).
    yield* repo.recordFailures([...byEngine.values()].flatMap((bucket) => bucket.failures))
    yield* repo.recordEngineStatus(due.accountId, due.id, reports.map((r) => ({ ...r, scannedAt: at })))
    const failures = reports.reduce((sum, r) => sum + r.failures, 0)
    if (failures > 0) {
      yield* Effect.logWarning(`scanner: brand ${due.slug}: ${failures} engine call(s) failed after retries`)
    }
    return {
      observations: reports.reduce((sum, r) => sum + r.observations, 0),
      failures,
      engines: reports,
      skipped: null
    } satisfies BrandScanReport
  }).pipe(
    // A brand removed between the claim and the scan: nothing to do.
    Effect.catchTag("NotFound", () => Effect.succeed({ observations: 0, failures: 0, engines: [], skipped: null } satisfies BrandScanReport))
  )

/** One wake-up: claim the due brands and scan them (one after another). */
export const scanDue = Effect.gen(function*() {
  const engines = yield* AnswerEngines
  if (engines.length === 0) return { brands: 0, observations: 0, failures: 0 } satisfies ScanReport
  const settings = yield* ScannerConfig
  const repo = yield* ObservationsRepo
  const at = yield* now
  const due = yield* repo.claimDue(at, settings.brandsPerTick)
  const limits = yield* makeProviderLimits(settings.providerConcurrency)
  let observations = 0
  let failures = 0
  for (const brand of due) {
    const report = yield* scanBrand(brand, at, { limits })
    observations += report.observations
    failures += report.failures
  }
  return { brands: due.length, observations, failures } satisfies ScanReport
})

/** The scanner loop: a wake-up now, then one every interval; an unexpected failure is logged, the loop goes on. */
export const scannerLoop = Effect.gen(function*() {
  const settings = yield* ScannerConfig
  const engines = yield* AnswerEngines
  if (!settings.enabled) return yield* Effect.logInfo("scanner: disabled (SCANNER_ENABLED=false)")
  if (engines.length === 0) return yield* Effect.logInfo("scanner: no answer engine configured (ENGINE_<SLUG>_URL and _MODEL); not scanning")
  yield* Effect.logInfo(`scanner: engines ${engines.map((e) => e.slug).join(", ")}; every ${Duration.format(settings.interval)}`)
  yield* scanDue.pipe(
    Effect.tap((report) =>
      report.brands > 0
        ? Effect.logInfo(`scanner: ${report.brands} brand(s), ${report.observations} observation(s), ${report.failures} failure(s)`)
        : Effect.void
    ),
    Effect.catchAllCause((cause) => Effect.logError("scanner: wake-up failed", cause)),
    Effect.repeat(Schedule.spaced(settings.interval))
  )
})

/** The scanner fiber of the server, with engines and settings from the environment. */
export const ScannerLive = Layer.scopedDiscard(Effect.forkScoped(scannerLoop)).pipe(
  Layer.provide(AnswerEnginesLive.pipe(Layer.provide(FetchHttpClient.layer))),
  Layer.provide(Layer.effect(ScannerConfig, scannerSettingsFromEnv))
)
