import { Config, Context, Effect, Layer, Option } from "effect"
import { gunzipBounded, isGzip } from "../platform/Inflate.js"
import { Brands, BrandsLive } from "../brands/Brands.js"
import type { BrandRow } from "../brands/Brands.js"
import { badRequest, PayloadTooLarge, type BadRequest, type NotFound } from "../platform/HttpErrors.js"
import { ENGINE_SLUGS, LANGUAGE_RULE, languageCode, REGION_RULE, regionCode } from "../platform/Schemas.js"
import { monthStart } from "../platform/Days.js"
import { workSlicer } from "../platform/EventLoop.js"
import { now } from "../platform/Time.js"
import { Alerts, AlertsLive } from "../webhooks/Alerts.js"
import { Analysis, type Analyzer, type RawAnswer, AnalysisLive } from "./Analysis.js"
import {
  observationKey,
  ObservationsRepo,
  type EntityRow,
  type ObservationOrigin,
  type PromptRef,
  type StoredObservation
} from "./Repo.js"
import { isRecord } from "../platform/Guards.js"

/**
 * Answer observations in: validation, prompt resolution, the analysis (once, at write time) and
 * storage. The import endpoint, `bun run cli import`, the scanner and the demo all come through here.
 */

export const MAX_IMPORT_OBSERVATIONS = 5000
/** An answer's length at most: the analysis of the longest one stays a few milliseconds (docs/security.md). */
export const MAX_RESPONSE_CHARS = 100_000
const MAX_CITATIONS = 200
const MAX_FANOUTS = 100
const MAX_PROMPT_CHARS = 2000
/** Observations stored per transaction. */
const CHUNK = 1000
/** An observed_at further than this in the future is refused (clock skew allowance). */
const FUTURE_SLACK_MS = 24 * 3600 * 1000

export interface ImportResult {
  readonly imported: number
  readonly skipped: number
  readonly errors: ReadonlyArray<{ readonly line: number; readonly error: string }>
}

/** One observation as it arrives (docs/observations.md), once validated. */
export interface ObservationInput {
  readonly prompt: string
  readonly engine: string
  readonly region: string | undefined
  readonly language: string | undefined
  readonly observedAt: Date
  readonly response: string
  readonly citations: ReadonlyArray<string>
  readonly fanouts: ReadonlyArray<{ readonly sub_question: string; readonly citations: ReadonlyArray<string> }>
}

/** A brand ready to receive observations: its row, entities compiled for analysis, its prompts by text. */
export interface BrandTarget {
  readonly brand: BrandRow
  readonly competitors: ReadonlyArray<EntityRow>
  readonly analyzer: Analyzer
  readonly prompts: Map<string, PromptRef>
}

/** An observation of a known prompt (the scanner and the demo). */
export interface PromptObservation extends RawAnswer {
  /** Tokens the engine reported (scans); stored with the observation and counted against the monthly budget. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly costUsd: number | null } | undefined
  readonly promptId: string
  readonly engine: string
  readonly region: string
  readonly language: string
  readonly observedAt: Date
}

export interface ScanStatus {
  readonly brand_slug: string
  readonly engines: ReadonlyArray<{
    readonly engine: string
    readonly scanned_at: string
    readonly observations: number
    readonly failures: number
    readonly failures_by_reason: Readonly<Record<string, number>>
    readonly last_error: string | null
    readonly tokens: number
  }>
  readonly month_tokens: number
  readonly monthly_token_budget: number | null
}

export interface ObservationsShape {
  /** The import endpoint's body: a JSON array or NDJSON (gzip allowed), at most 5,000 observations. */
  readonly importBody: (
    accountId: number,
    slug: string,
    body: Uint8Array
  ) => Effect.Effect<ImportResult, BadRequest | NotFound | PayloadTooLarge>
  /** Already split records with their line numbers (the CLI reads files of any length in pieces). */
  readonly importRecords: (
    accountId: number,
    slug: string,
    records: ReadonlyArray<{ readonly line: number; readonly value: unknown }>,
    origin?: ObservationOrigin
  ) => Effect.Effect<ImportResult, NotFound>
  readonly target: (accountId: number, slug: string) => Effect.Effect<BrandTarget, NotFound>
  /** Analyses and stores observations of known prompts; keys already stored are skipped. */
  /** The brand's last scan per engine and the account's tokens this month (the dashboard). */
  readonly scanStatus: (accountId: number, slug: string) => Effect.Effect<ScanStatus, NotFound>
  readonly record: (
    target: BrandTarget,
    observations: ReadonlyArray<PromptObservation>,
    origin: ObservationOrigin
  ) => Effect.Effect<{ readonly inserted: number; readonly skipped: number }>
}

export class Observations extends Context.Tag("Observations")<Observations, ObservationsShape>() {}

// ---------------------------------------------------------------------------
// Parsing and validation (pure)
// ---------------------------------------------------------------------------

const ENGINES: ReadonlySet<string> = new Set(ENGINE_SLUGS)
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i

const isHttpUrl = (value: unknown): value is string => {
  if (typeof value !== "string" || value.length > 4096) return false
  try {
    const url = new URL(value)
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
  } catch {
    return false
  }
}

const urlList = (value: unknown, field: string): ReadonlyArray<string> | string => {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) return `invalid ${field}: must be an array of URLs`
  if (value.length > MAX_CITATIONS) return `invalid ${field}: at most ${MAX_CITATIONS} URLs`
  for (let i = 0; i < value.length; i++) {
    if (!isHttpUrl(value[i])) return `invalid ${field}[${i}]: not an http(s) URL`
  }
  return value as ReadonlyArray<string>
}

/** One record of an import, validated; a string is the line's error. */
export const validateObservation = (value: unknown, nowMs: number): ObservationInput | string => {
  if (!isRecord(value)) return "not a JSON object"
  const record = value
  const prompt = typeof record.prompt === "string" ? record.prompt.trim() : ""
  if (prompt === "") return "prompt required"
  if (prompt.length > MAX_PROMPT_CHARS) return `invalid prompt: at most ${MAX_PROMPT_CHARS} characters`
  if (typeof record.engine !== "string" || record.engine === "") return "engine required"
  if (!ENGINES.has(record.engine)) return `invalid engine: must be one of ${ENGINE_SLUGS.join(", ")}`
  let region: string | undefined
  if (record.region !== undefined && record.region !== null && record.region !== "") {
    region = regionCode(record.region)
    if (region === undefined) return `invalid region: ${REGION_RULE}`
  }
  let language: string | undefined
  if (record.language !== undefined && record.language !== null && record.language !== "") {
    language = languageCode(record.language)
    if (language === undefined) return `invalid language: ${LANGUAGE_RULE}`
  }
  if (record.observed_at === undefined || record.observed_at === null || record.observed_at === "") return "observed_at required"
  if (typeof record.observed_at !== "string" || !ISO_DATE_TIME.test(record.observed_at)) {
    return "invalid observed_at: must be an ISO 8601 date-time with a time zone"
  }
  const observedAt = new Date(record.observed_at)
  if (Number.isNaN(observedAt.getTime())) return "invalid observed_at: must be an ISO 8601 date-time with a time zone"
  if (observedAt.getTime() > nowMs + FUTURE_SLACK_MS) return "invalid observed_at: in the future"
  if (typeof record.response !== "string") return "response required"
  if (record.response.length > MAX_RESPONSE_CHARS) return `invalid response: at most ${MAX_RESPONSE_CHARS} characters`
  const citations = urlList(record.citations, "citations")
  if (typeof citations === "string") return citations
  const fanouts: Array<{ sub_question: string; citations: ReadonlyArray<string> }> = []
  if (record.fanouts !== undefined && record.fanouts !== null) {
    if (!Array.isArray(record.fanouts)) return "invalid fanouts: must be an array"
    if (record.fanouts.length > MAX_FANOUTS) return `invalid fanouts: at most ${MAX_FANOUTS}`
    for (let i = 0; i < record.fanouts.length; i++) {
      const fanout = record.fanouts[i] as Record<string, unknown> | null
      if (typeof fanout !== "object" || fanout === null) return `invalid fanouts[${i}]: must be an object`
      const question = typeof fanout.sub_question === "string" ? fanout.sub_question.trim() : ""
      if (question === "") return `invalid fanouts[${i}].sub_question: required`
      const cited = urlList(fanout.citations, `fanouts[${i}].citations`)
      if (typeof cited === "string") return cited
      fanouts.push({ sub_question: question.slice(0, MAX_PROMPT_CHARS), citations: cited })
    }
  }
  return {
    prompt,
    engine: record.engine,
    region,
    language,
    observedAt,
    response: record.response,
    citations,
    fanouts
  }
}

/**
 * The body's records with their line numbers: a JSON array (line = position in the array, from 1)
 * or NDJSON (line = line of the body, from 1; blank lines are skipped but counted). A gzip body
 * (magic bytes 1f 8b) is unpacked first.
 */
/** The largest import body once inflated (a gzip body), as large as the largest plain body by default. */
export const MAX_IMPORT_INFLATED_BYTES = 32 * 1024 * 1024

export const splitBody = (
  body: Uint8Array,
  limit: number = MAX_IMPORT_OBSERVATIONS
): Effect.Effect<ReadonlyArray<{ line: number; value: unknown }>, BadRequest | PayloadTooLarge> =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<{ line: number; value: unknown }>, BadRequest | PayloadTooLarge> => {
    let bytes: Uint8Array = body
    if (isGzip(bytes)) {
      // Bounded (src/platform/Inflate.ts): a gzip bomb stops at the bound, in bounded memory.
      const inflated = gunzipBounded(bytes, MAX_IMPORT_INFLATED_BYTES)
      if ("error" in inflated) {
        return Effect.fail(
          inflated.error === "bad gzip"
            ? badRequest("invalid gzip body")
            : new PayloadTooLarge({ error: `body too large: inflates past ${MAX_IMPORT_INFLATED_BYTES} bytes` })
        )
      }
      bytes = inflated.ok
    }
    const text = new TextDecoder().decode(bytes)
    const start = text.search(/\S/)
    if (start === -1) return Effect.fail(badRequest("empty body: send a JSON array or NDJSON of observations"))
    const tooMany = new PayloadTooLarge({ error: `at most ${limit} observations per request` })
    if (text[start] === "[") {
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return Effect.fail(badRequest("invalid JSON body"))
      }
      if (!Array.isArray(parsed)) return Effect.fail(badRequest("invalid JSON body"))
      if (parsed.length > limit) return Effect.fail(tooMany)
      return Effect.succeed(parsed.map((value, i) => ({ line: i + 1, value })))
    }
    const lines = text.split("\n")
    const records: Array<{ line: number; value: unknown }> = []
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim()
      if (line === "") continue
      if (records.length === limit) return Effect.fail(tooMany)
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        value = INVALID_JSON
      }
      records.push({ line: i + 1, value })
    }
    return Effect.succeed(records)
  })

const INVALID_JSON = Symbol("invalid JSON")

/** Whether any string of a parsed record holds a NUL character (an error line, not a failed import). */
const holdsNul = (value: unknown): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (Array.isArray(value)) return value.some(holdsNul)
  if (typeof value === "object" && value !== null) return Object.entries(value).some(([k, v]) => k.includes("\u0000") || holdsNul(v))
  return false
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

export const ObservationsLive = Layer.effect(
  Observations,
  Effect.gen(function*() {
    const repo = yield* ObservationsRepo
    const brands = yield* Brands
    const analysis = yield* Analysis
    const alerts = yield* Alerts

    const target: ObservationsShape["target"] = (accountId, slug) =>
      Effect.gen(function*() {
        const brand = yield* brands.row(accountId, slug)
        const [competitors, prompts] = yield* Effect.all([repo.competitors(accountId, brand.id), repo.prompts(accountId, brand.id)])
        const analyzer = analysis.compile({
          brand: { name: brand.name, domain: brand.domain, aliases: brand.aliases },
          competitors
        })
        return { brand, competitors, analyzer, prompts: new Map(prompts.map((p) => [p.prompt, p])) }
      })

    const store = (target: BrandTarget, rows: ReadonlyArray<StoredObservation>) =>
      Effect.reduce(
        chunks(rows, CHUNK),
        0,
        (inserted, chunk) => Effect.map(repo.insert(chunk), (result) => inserted + result.inserted)
      ).pipe(
        // visibility.changed, citation.gained/lost after a scan or an import (docs/webhooks.md).
        // Not for the demo workspace's generated history.
        Effect.tap((inserted) =>
          inserted > 0 && rows.some((row) => row.origin !== "demo")
            ? alerts.observationsStored({ accountId: target.brand.accountId, brandId: target.brand.id, slug: target.brand.slug })
            : Effect.void
        )
      )

    const record: ObservationsShape["record"] = (target, observations, origin) =>
      Effect.gen(function*() {
        const seen = new Set<string>()
        const rows: Array<StoredObservation> = []
        const slicer = workSlicer()
        for (const o of observations) {
          const key = observationKey(o)
          if (seen.has(key)) continue
          seen.add(key)
          yield* slicer.tick
          rows.push({
            accountId: target.brand.accountId,
            brandId: target.brand.id,
            promptId: o.promptId,
            engine: o.engine,
            region: o.region,
            language: o.language,
            observedAt: o.observedAt,
            origin,
            response: o.response,
            usage: o.usage,
            analysis: target.analyzer.analyse({
              response: o.response,
              citations: o.citations.filter(isHttpUrl),
              fanouts: o.fanouts.map((f) => ({ sub_question: f.sub_question, citations: f.citations.filter(isHttpUrl) }))
            })
          })
        }
        const inserted = yield* store(target, rows)
        return { inserted, skipped: observations.length - inserted }
      })

    /** The prompt of an imported observation; an unknown text becomes a monitored prompt (source imported). */
    const resolvePrompt = (accountId: number, t: BrandTarget, text: string) =>
      Effect.gen(function*() {
        const known = t.prompts.get(text)
        if (known !== undefined) return known
        const created = yield* brands.addPrompt(accountId, t.brand.slug, { prompt: text, source: "imported" }).pipe(
          Effect.map((p): PromptRef | string => ({ id: p.id, num: 0, prompt: p.prompt })),
          Effect.catchTags({
            PlanLimitReached: (e) =>
              Effect.succeed(`prompt not monitored and the ${e.plan} plan's cap of ${e.limit} monitored prompts is reached`),
            BadRequest: (e) => Effect.succeed(e.error),
            // Added meanwhile by another request: read it back.
            Conflict: () =>
              Effect.map(
                repo.prompts(accountId, t.brand.id),
                (all) => all.find((p) => p.prompt === text) ?? "prompt could not be created"
              ),
            NotFound: (e) => Effect.succeed(e.error)
          })
        )
        if (typeof created !== "string") t.prompts.set(text, created)
        return created
      })

    const importRecords: ObservationsShape["importRecords"] = (accountId, slug, records, origin = "import") =>
      Effect.gen(function*() {
        // Each record is validated and analysed synchronously: the event loop gets a turn between them
        // (the slicer counts from here, so compiling the brand's names is one slice of its own).
        const slicer = workSlicer()
        const t = yield* target(accountId, slug)
        const nowMs = (yield* now).getTime()
        const errors: Array<{ line: number; error: string }> = []
        const failedPrompts = new Map<string, string>()
        const seen = new Set<string>()
        const rows: Array<StoredObservation> = []
        let duplicates = 0
        for (const { line, value } of records) {
          yield* slicer.tick
          const input = value === INVALID_JSON
            ? "invalid JSON"
            : holdsNul(value)
            ? "text with a NUL character (PostgreSQL cannot store it)"
            : validateObservation(value, nowMs)
          if (typeof input === "string") {
            errors.push({ line, error: input })
            continue
          }
          const failed = failedPrompts.get(input.prompt)
          if (failed !== undefined) {
            errors.push({ line, error: failed })
            continue
          }
          const prompt = yield* resolvePrompt(accountId, t, input.prompt)
          if (typeof prompt === "string") {
            failedPrompts.set(input.prompt, prompt)
            errors.push({ line, error: prompt })
            continue
          }
          const row = {
            accountId,
            brandId: t.brand.id,
            promptId: prompt.id,
            engine: input.engine,
            region: input.region ?? t.brand.primaryRegion,
            language: input.language ?? t.brand.primaryLanguage,
            observedAt: input.observedAt,
            origin,
            response: input.response
          }
          const key = observationKey(row)
          if (seen.has(key)) {
            duplicates++
            continue
          }
          seen.add(key)
          rows.push({ ...row, analysis: t.analyzer.analyse(input) })
        }
        const imported = yield* store(t, rows)
        return { imported, skipped: duplicates + rows.length - imported, errors }
      })

    return {
      importBody: (accountId, slug, body) =>
        Effect.gen(function*() {
          // The brand first: an unknown slug is 404 whatever the body holds.
          yield* brands.row(accountId, slug)
          const records = yield* splitBody(body)
          return yield* importRecords(accountId, slug, records)
        }),
      importRecords,
      target,
      record,
      scanStatus: (accountId, slug) =>
        Effect.gen(function*() {
          const brand = yield* brands.row(accountId, slug)
          const at = yield* now
          const [statuses, monthTokens] = yield* Effect.all([
            repo.engineStatus(accountId, brand.id),
            repo.tokensInMonth(accountId, monthStart(at))
          ])
          // The scanner's own setting (docs/observations.md); read here so the dashboard shows it.
          const budget = yield* Config.option(Config.integer("SCAN_MONTHLY_TOKEN_BUDGET")).pipe(Effect.orElseSucceed(() => Option.none<number>()))
          return {
            brand_slug: brand.slug,
            engines: statuses.map((s) => ({
              engine: s.engine,
              scanned_at: s.scannedAt.toISOString(),
              observations: s.observations,
              failures: s.failures,
              failures_by_reason: s.failuresByReason,
              last_error: s.lastError,
              tokens: s.tokens
            })),
            month_tokens: monthTokens,
            monthly_token_budget: Option.getOrNull(Option.filter(budget, (b) => b > 0))
          }
        })
    }
  })
).pipe(Layer.provide([BrandsLive, AlertsLive, AnalysisLive]))

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
