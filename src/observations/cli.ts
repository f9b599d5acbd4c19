import { FetchHttpClient } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { Accounts } from "../accounts/Accounts.js"
import { MAX_IMPORT_OBSERVATIONS, Observations, splitBody } from "./Observations.js"
import { AnswerEngines, AnswerEnginesLive } from "./Engines.js"
import { ObservationsRepo } from "./Repo.js"
import { makeProviderLimits, ScannerConfig, scannerSettingsFromEnv, scanBrand } from "./Scanner.js"
import { now } from "../platform/Time.js"

/**
 * `bun run cli import` and `bun run cli scan` (src/app/cli.ts dispatches here): the same services
 * and database as the server. Failures are plain Errors with the message to print.
 */

const fail = (message: string) => Effect.fail(new Error(message))

/** The account a brand slug names: the --email user's, or the only account with that slug. */
const accountFor = (slug: string, email: string | undefined) =>
  Effect.gen(function*() {
    if (email !== undefined) {
      const account = yield* (yield* Accounts).accountOfEmail(email)
      if (Option.isNone(account)) return yield* fail(`no user with email ${email}`)
      return account.value
    }
    const accounts = yield* (yield* ObservationsRepo).accountsWithSlug(slug)
    if (accounts.length === 0) return yield* fail(`no brand with slug ${slug}`)
    if (accounts.length > 1) {
      return yield* fail(`brand slug ${slug} exists in ${accounts.length} accounts (${accounts.map((a) => a.email).join(", ")}): pass --email`)
    }
    return accounts[0]!.accountId
  })

/**
 * `import <brand-slug> <file> [--email <user email>]`: a JSON array or NDJSON file (gzip allowed),
 * imported by the same service as the endpoint, 5,000 observations at a time; prints the result.
 */
export const importCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const positional: Array<string> = []
    let email: string | undefined
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--email") email = args[++i]
      else positional.push(args[i]!)
    }
    const [slug, file] = positional
    if (slug === undefined || file === undefined || positional.length !== 2 || (args.includes("--email") && !email)) {
      return yield* fail("usage: bun run cli import <brand-slug> <file> [--email <user email>]")
    }
    const bytes = yield* Effect.tryPromise({
      try: () => Bun.file(file).bytes(),
      catch: () => new Error(`cannot read ${file}`)
    })
    const accountId = yield* accountFor(slug, email)
    const observations = yield* Observations
    // The file may hold more than one request's worth: split it with the endpoint's parser, lifted cap.
    const records = yield* splitAll(bytes)
    let imported = 0
    let skipped = 0
    const errors: Array<{ line: number; error: string }> = []
    for (let i = 0; i < records.length || i === 0; i += MAX_IMPORT_OBSERVATIONS) {
      const result = yield* observations.importRecords(accountId, slug, records.slice(i, i + MAX_IMPORT_OBSERVATIONS)).pipe(
        Effect.catchTag("NotFound", (e) => fail(e.error))
      )
      imported += result.imported
      skipped += result.skipped
      errors.push(...result.errors)
    }
    yield* Console.log(JSON.stringify({ imported, skipped, errors }))
    // What was valid is stored; a script still learns that some lines were not (exit code 1).
    if (errors.length > 0) return yield* fail(`${errors.length} line(s) not imported: see "errors" above`)
  })

/** The endpoint's parser without its per-request cap: a file may hold any number of observations. */
const splitAll = (bytes: Uint8Array) =>
  splitBody(bytes, Number.POSITIVE_INFINITY).pipe(
    Effect.catchTags({ BadRequest: (e) => fail(e.error), PayloadTooLarge: (e) => fail(e.error) })
  )

/** Engines and scanner settings from the environment (docs/observations.md), for `scan`. */
export const scanEnvironmentLive = Layer.merge(
  AnswerEnginesLive.pipe(Layer.provide(FetchHttpClient.layer)),
  Layer.effect(ScannerConfig, scannerSettingsFromEnv)
)

/**
 * `scan [--brand <slug>] [--engine <slug>] [--samples N]`: one scan now, in the foreground, of every
 * brand (or those with that slug), on every configured engine (or that one); nothing is claimed, so
 * the server's cadence is unchanged. Prints what it stored per brand and engine, and why calls failed.
 */
export const scanCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const flags: Record<string, string> = {}
    for (let i = 0; i < args.length; i++) {
      const flag = args[i]!
      const value = args[i + 1]
      if (!["--brand", "--engine", "--samples"].includes(flag) || value === undefined || value.startsWith("--")) {
        return yield* fail("usage: bun run cli scan [--brand <slug>] [--engine <slug>] [--samples N]")
      }
      flags[flag] = value
      i++
    }
    const samples = flags["--samples"] === undefined ? undefined : Number(flags["--samples"])
    if (samples !== undefined && (!Number.isInteger(samples) || samples < 1 || samples > 20)) {
      return yield* fail("--samples must be an integer from 1 to 20")
    }
    const engines = yield* AnswerEngines
    if (engines.length === 0) return yield* fail("no answer engine configured: set ENGINE_<SLUG>_URL and ENGINE_<SLUG>_MODEL (README)")
    const onlyEngine = flags["--engine"]
    if (onlyEngine !== undefined && !engines.some((e) => e.slug === onlyEngine)) {
      return yield* fail(`engine ${onlyEngine} is not configured (configured: ${engines.map((e) => e.slug).join(", ")})`)
    }
    const settings = yield* ScannerConfig
    const brands = yield* (yield* ObservationsRepo).scanTargets(flags["--brand"] ?? null)
    if (brands.length === 0) return yield* fail(flags["--brand"] === undefined ? "no brand to scan" : `no brand with slug ${flags["--brand"]}`)
    const at = yield* now
    const limits = yield* makeProviderLimits(settings.providerConcurrency)
    const perCall = samples ?? settings.samples
    yield* Console.log(`scan at ${at.toISOString()}: ${brands.length} brand(s), ${perCall} sample(s) per prompt and engine`)
    let failures = 0
    const byReason: Record<string, number> = {}
    for (const brand of brands) {
      const report = yield* scanBrand(brand, at, { limits, onlyEngine, samples: perCall })
      failures += report.failures
      for (const engine of report.engines) {
        for (const [reason, n] of Object.entries(engine.failuresByReason)) byReason[reason] = (byReason[reason] ?? 0) + n
      }
      yield* Console.log(
        `${brand.slug} (account ${brand.accountId}): ${report.observations} observation(s), ${report.failures} failure(s)` +
          (report.skipped === null ? "" : ` (not scanned: ${report.skipped})`)
      )
      for (const engine of report.engines) {
        const reasons = Object.entries(engine.failuresByReason).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        yield* Console.log(
          `  ${engine.engine.padEnd(12)} ${String(engine.observations).padStart(5)} stored  ${String(engine.failures).padStart(4)} failed` +
            `${reasons.length === 0 ? "" : ` (${reasons.map(([reason, n]) => `${reason} ${n}`).join(", ")})`}  ` +
            `${engine.tokens} tokens${engine.lastError === null ? "" : `  last error: ${engine.lastError}`}`
        )
      }
    }
    const reasons = Object.entries(byReason).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    if (reasons.length > 0) yield* Console.log(`failures by reason: ${reasons.map(([reason, n]) => `${reason} ${n}`).join(", ")}`)
    return failures
  })
