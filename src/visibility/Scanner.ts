import { FetchHttpClient } from "@effect/platform"
import { Config, Context, Duration, Effect, Either, Layer, Schedule } from "effect"
import { now } from "../platform/Time.js"
import { AnswerEngines, AnswerEnginesFromEnv, type AnswerEngine, type EngineError } from "./Engines.js"
import { Observations, type PromptObservation } from "./Observations.js"
import { ObservationsRepo, type DueBrand, type ScanFailure } from "./ObservationsRepo.js"

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
  readonly concurrency: number
  /** Retries after the first attempt. */
  readonly retries: number
  readonly retryBase: Duration.Duration
  readonly brandsPerTick: number
}

export class ScannerConfig extends Context.Tag("ScannerConfig")<ScannerConfig, ScannerSettings>() {}

export const scannerSettingsFromEnv: Config.Config<ScannerSettings> = Config.all({
  enabled: Config.boolean("SCANNER_ENABLED").pipe(Config.withDefault(true)),
  interval: Config.integer("SCANNER_INTERVAL_SECONDS").pipe(Config.withDefault(60), Config.map((s) => Duration.seconds(Math.max(1, s)))),
  concurrency: Config.integer("SCANNER_CONCURRENCY").pipe(Config.withDefault(4), Config.map((n) => Math.max(1, n))),
  retries: Config.integer("ENGINE_RETRIES").pipe(Config.withDefault(3), Config.map((n) => Math.max(0, n))),
  retryBase: Config.integer("ENGINE_RETRY_BASE_MS").pipe(Config.withDefault(1000), Config.map((ms) => Duration.millis(Math.max(1, ms)))),
  brandsPerTick: Config.integer("SCANNER_BRANDS_PER_TICK").pipe(Config.withDefault(10), Config.map((n) => Math.max(1, n)))
})

export const scannerConfig = (settings: Partial<ScannerSettings> = {}) =>
  Layer.succeed(ScannerConfig, {
    enabled: true,
    interval: Duration.seconds(60),
    concurrency: 4,
    retries: 3,
    retryBase: Duration.seconds(1),
    brandsPerTick: 10,
    ...settings
  })

export interface ScanReport {
  readonly brands: number
  readonly observations: number
  readonly failures: number
}

/** One call with retries: the answer, or the last error and how many attempts were made. */
const askWithRetry = (engine: AnswerEngine, question: Parameters<AnswerEngine["ask"]>[0], settings: ScannerSettings) =>
  Effect.suspend(() => {
    let attempts = 0
    return Effect.suspend(() => {
      attempts++
      return engine.ask(question)
    }).pipe(
      Effect.retry({
        schedule: Schedule.exponential(settings.retryBase, 2),
        times: settings.retries,
        while: (error: EngineError) => error.retryable
      }),
      Effect.either,
      Effect.map((result) => ({ result, attempts }))
    )
  })

/** Scans one claimed brand at `at` (the observed_at of all its answers). */
export const scanBrand = (due: DueBrand, at: Date) =>
  Effect.gen(function*() {
    const engines = yield* AnswerEngines
    const settings = yield* ScannerConfig
    const observations = yield* Observations
    const repo = yield* ObservationsRepo
    const target = yield* observations.target(due.accountId, due.slug)
    const prompts = [...target.prompts.values()]
    const tasks = prompts.flatMap((prompt) => engines.map((engine) => ({ prompt, engine })))
    const results = yield* Effect.forEach(
      tasks,
      ({ engine, prompt }) =>
        Effect.map(
          askWithRetry(engine, {
            prompt: prompt.prompt,
            region: target.brand.primaryRegion,
            language: target.brand.primaryLanguage
          }, settings),
          (outcome) => ({ ...outcome, engine, prompt })
        ),
      { concurrency: settings.concurrency }
    )
    const answers: Array<PromptObservation> = []
    const failures: Array<ScanFailure> = []
    for (const { attempts, engine, prompt, result } of results) {
      if (Either.isRight(result)) {
        answers.push({
          ...result.right,
          promptId: prompt.id,
          engine: engine.slug,
          region: target.brand.primaryRegion,
          language: target.brand.primaryLanguage,
          observedAt: at
        })
      } else {
        failures.push({
          accountId: due.accountId,
          brandId: due.id,
          promptId: prompt.id,
          engine: engine.slug,
          attempts,
          error: result.left.message.slice(0, 1000),
          failedAt: at
        })
      }
    }
    const stored = yield* observations.record(target, answers, "scan")
    yield* repo.recordFailures(failures)
    if (failures.length > 0) {
      yield* Effect.logWarning(`scanner: brand ${due.slug}: ${failures.length} engine call(s) failed after retries`)
    }
    return { observations: stored.inserted, failures: failures.length }
  }).pipe(
    // A brand removed between the claim and the scan: nothing to do.
    Effect.catchTag("NotFound", () => Effect.succeed({ observations: 0, failures: 0 }))
  )

/** One wake-up: claim the due brands and scan them (one after another). */
export const scanDue = Effect.gen(function*() {
  const engines = yield* AnswerEngines
  if (engines.length === 0) return { brands: 0, observations: 0, failures: 0 } satisfies ScanReport
  const settings = yield* ScannerConfig
  const repo = yield* ObservationsRepo
  const at = yield* now
  const due = yield* repo.claimDue(at, settings.brandsPerTick)
  let observations = 0
  let failures = 0
  for (const brand of due) {
    const report = yield* scanBrand(brand, at)
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
  Layer.provide(AnswerEnginesFromEnv.pipe(Layer.provide(FetchHttpClient.layer))),
  Layer.provide(Layer.effect(ScannerConfig, scannerSettingsFromEnv))
)
