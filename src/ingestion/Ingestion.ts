import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, Exit, Layer, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import type { Plan } from "../accounts/Plans.js"
import { monthStart } from "../platform/Days.js"
import { Accounts, AccountsLive } from "../accounts/Accounts.js"
import { type BrandKey, Brands, type SiteBrand, BrandsLive } from "../brands/Brands.js"
import { Classifier, ClassifierLive } from "../catalog/Classifier.js"
import { isPerson } from "../catalog/Person.js"
import {
  badRequest,
  type BadRequest,
  forbidden,
  type Forbidden,
  notFound,
  type NotFound,
  PayloadTooLarge,
  QuotaExceeded
} from "../platform/HttpErrors.js"
import { metrics } from "../platform/Metrics.js"
import { now } from "../platform/Time.js"
import { MAX_BATCH_RECORDS } from "./Api.js"
import { IngestionConfig } from "./Config.js"
import { DrainDecoder, gunzipBounded, isGzip, DrainDecoderLive } from "./DrainDecoder.js"
import { isLogFormat, LOG_FORMATS, type LogFormat } from "./formats/common.js"
import { type HitRow, HitsRepo, type ReferralRow, type SpoofedCount } from "./HitsRepo.js"
import { QuotaRepo } from "./QuotaRepo.js"
import { IngestionReports } from "./Reports.js"
import { Verification, VerificationLive } from "../verification/Verification.js"
import { BATCH_CHANNELS, fromBatchRecord, isBatchChannel, type LogRequest, referrerEngine, splitPath } from "./Records.js"
import { Spool, type SpooledDelivery, SpoolLive } from "./Spool.js"
import { errorCode } from "../platform/Guards.js"

/**
 * Server-log ingestion (docs/ingestion.md, docs/decisions.md, docs/agents.md): checks, then
 * classification, then storage under the monthly cap. The drain never loses a delivery to a
 * database outage: it spools it and answers 200; SpoolReplayLive stores it later.
 */

export interface IngestResult {
  readonly accepted: number
  readonly monthly_used: number
  readonly monthly_cap: number
}

export interface DrainResult extends IngestResult {
  readonly scanned: number
  readonly skipped: number
  /** For ingestion health: the log source most records were read as, else the format asked (auto when none). */
  readonly format: LogFormat
}

export interface BatchInput {
  readonly site_id: string
  readonly records: ReadonlyArray<unknown>
  readonly channel?: string | undefined
}

export interface DrainInput {
  readonly accountId: number
  readonly siteId: string | undefined
  readonly signature: string | undefined
  /** The raw body; null when it was over the size limit and was not read. */
  readonly body: Uint8Array | null
  /** The `format` query parameter as given (docs/ingestion.md, "Log sources"); absent means auto. */
  readonly format?: string | undefined
}

export type ReplayOutcome =
  | { readonly _tag: "Stored"; readonly result: DrainResult }
  | { readonly _tag: "Dropped"; readonly reason: string }

export interface IngestionShape {
  readonly batch: (
    accountId: number,
    input: BatchInput
  ) => Effect.Effect<IngestResult, BadRequest | Forbidden | NotFound | PayloadTooLarge | QuotaExceeded>
  readonly drain: (input: DrainInput) => Effect.Effect<DrainResult, BadRequest | Forbidden | NotFound | QuotaExceeded>
  /** Stores a spooled delivery like a live one; dies with the SqlError while the database is still down. */
  readonly replay: (delivery: SpooledDelivery) => Effect.Effect<ReplayOutcome>
  /**
   * One page load reported by the JavaScript tag (docs/agents.md): classified by the same
   * catalog and, when it is an AI agent's, stored with channel `tag` under the monthly cap.
   * Returns the hits stored (0 or 1); an unknown site is NotFound.
   */
  readonly tag: (input: TagInput) => Effect.Effect<number, NotFound | QuotaExceeded>
  /** Per brand of `brands` and bot: stored hits judged spoofed since `since`, where there are at least `min` (the surge alert). */
  readonly spoofedCounts: (brands: ReadonlyArray<BrandKey>, since: Date, min: number) => Effect.Effect<ReadonlyArray<SpoofedCount>>
}

export interface TagInput {
  readonly siteId: string
  readonly ua: string
  /** The page's path and query ("/a?b"). */
  readonly url: string
  readonly host: string
  readonly referrer: string
  readonly clientIp: string | null
}

export class Ingestion extends Context.Tag("Ingestion")<Ingestion, IngestionShape>() {}

export const CAP_REACHED = "monthly server-log event cap reached"
const PLAN_BATCH = forbidden("plan not entitled to server-log ingestion")
const PLAN_DRAIN = forbidden("plan not entitled to log-drain ingestion: Growth plan or higher")
/** A drain delivery refused for its signature: answered 403, and counted as such in ingestion health. */
export class SignatureRefused extends Schema.TaggedError<SignatureRefused>()("SignatureRefused", {
  reason: Schema.Literal("missing", "mismatch")
}) {}
const signatureForbidden = (refused: SignatureRefused) =>
  forbidden(refused.reason === "missing" ? "missing x-drain-signature" : "x-drain-signature mismatch")
const MISSING_SITE = badRequest("missing site_id")
const UNKNOWN_SITE = notFound("unknown site_id")
const BAD_CHANNEL = badRequest(`invalid channel: must be one of ${BATCH_CHANNELS.join(", ")}`)
const BAD_FORMAT = (given: string) =>
  badRequest(`invalid format: ${given.slice(0, 40)} (one of ${LOG_FORMATS.join(", ")})`)
const TOO_MANY = new PayloadTooLarge({ error: `too many records: at most ${MAX_BATCH_RECORDS} per batch` })

const HEX40 = /^[0-9a-f]{40}$/

/** Hex HMAC-SHA1 of `bytes`, compared in constant time. */
const hmacMatches = (secret: string, bytes: Uint8Array, provided: Buffer) =>
  timingSafeEqual(createHmac("sha1", secret).update(bytes).digest(), provided)

/**
 * docs/ingestion.md: the hex HMAC-SHA1 of the raw body. A "sha1=" prefix and upper-case hex are
 * accepted; for a gzip body, a signature of the inflated body is accepted too (platforms differ
 * on which one they sign).
 */
export const signatureValid = (secret: string, body: Uint8Array, given: string, maxInflated: number): boolean => {
  let hex = given.trim().toLowerCase()
  if (hex.startsWith("sha1=")) hex = hex.slice(5)
  if (!HEX40.test(hex)) return false
  const provided = Buffer.from(hex, "hex")
  if (hmacMatches(secret, body, provided)) return true
  if (!isGzip(body)) return false
  const inflated = gunzipBounded(body, maxInflated)
  return "ok" in inflated && hmacMatches(secret, inflated.ok, provided)
}

/** An outage (retry later) rather than a statement the data made fail (SQLSTATE 22 data, 23 integrity, 42 syntax). */
export const isOutage = (defect: unknown): boolean => {
  if (!(defect instanceof SqlError)) return false
  const code = errorCode(defect.cause)
  return !(typeof code === "string" && /^(22|23|42)/.test(code))
}

export const IngestionLive = Layer.effect(
  Ingestion,
  Effect.gen(function*() {
    const brands = yield* Brands
    const accounts = yield* Accounts
    const hitsRepo = yield* HitsRepo
    const quota = yield* QuotaRepo
    const spool = yield* Spool
    const decoder = yield* DrainDecoder
    const { classify } = yield* Classifier
    const config = yield* IngestionConfig
    const verification = yield* Verification
    const alerts = yield* IngestionReports

    /** What the drain reports while the database is unreachable: the last figures it gave this account. */
    const lastKnown = new Map<number, { used: number; cap: number }>()

    /** Crawler hits and AI referrals of a delivery; the rest is skipped. Keys make a replay idempotent. */
    const split = (requests: ReadonlyArray<LogRequest>, deliveryId: string) => {
      const hits: Array<HitRow> = []
      const referrals: Array<ReferralRow> = []
      // isbot takes microseconds per User-Agent, and a referrer's engine a fraction of one; a delivery
      // repeats few distinct ones (bounded by its size).
      const people = new Map<string, boolean>()
      const engines = new Map<string, string | null>()
      for (let i = 0; i < requests.length; i++) {
        const request = requests[i]!
        const key = request.recordId !== null ? `r:${request.recordId}` : `${deliveryId}:${i}`
        const agent = request.ua === "" ? null : classify(request.ua)
        if (agent !== null) {
          hits.push({ ...request, key, bot: agent.bot, vendor: agent.vendor, kind: agent.kind })
        } else {
          // Only a person's visit is a referral; a bot the catalog does not know is skipped all the same.
          let engine = engines.get(request.referrer)
          if (engine === undefined) engines.set(request.referrer, (engine = referrerEngine(request.referrer)))
          if (engine === null) continue
          let person = people.get(request.ua)
          if (person === undefined) people.set(request.ua, (person = isPerson(request.ua, agent)))
          if (person) referrals.push({ ...request, key, engine })
        }
      }
      return { hits, referrals }
    }

    const store = (input: {
      readonly brand: SiteBrand
      readonly plan: Plan
      readonly channel: string
      readonly receivedAt: number
      readonly hits: ReadonlyArray<HitRow>
      readonly referrals: ReadonlyArray<ReferralRow>
    }): Effect.Effect<IngestResult, QuotaExceeded> =>
      Effect.gen(function*() {
        const { brand, plan } = input
        // docs/verification.md: every hit is stored with its verdict.
        const verdicts = yield* verification.verdicts(input.hits)
        const hits = input.hits.map((hit, i) => ({ ...hit, ...verdicts[i] }))
        const accountId = brand.accountId
        const month = monthStart(new Date(input.receivedAt))
        const cap = plan.monthlyEvents
        const rows = {
          accountId,
          cap,
          brandId: brand.id,
          channel: input.channel,
          month,
          hits,
          referrals: input.referrals,
          receivedAt: input.receivedAt
        }
        if (input.hits.length === 0) {
          // Referrals are not counted against the cap: no lock needed.
          if (input.referrals.length > 0) yield* hitsRepo.store({ ...rows, limit: 0, cap: null }).pipe(Effect.orDie)
          const used = yield* quota.used(accountId, month)
          lastKnown.set(accountId, { used, cap })
          return { accepted: 0, monthly_used: used, monthly_cap: cap }
        }
        const outcome = yield* quota.withinCap(accountId, month, cap, input.hits.length, (room) => hitsRepo.store({ ...rows, limit: room }))
        lastKnown.set(accountId, { used: outcome.used, cap })
        // crawler.new_bot and ingestion.quota (docs/webhooks.md).
        yield* alerts.hitsStored({ accountId, brandId: brand.id, month, used: outcome.used, cap, hits: input.hits.slice(0, outcome.room), stored: outcome.stored })
        if (outcome.room === 0) {
          return yield* Effect.fail(new QuotaExceeded({ error: CAP_REACHED, monthly_used: outcome.used, monthly_cap: cap }))
        }
        return { accepted: outcome.stored, monthly_used: outcome.used, monthly_cap: cap }
      })

    /** Every check and the storage of a drain delivery, live or replayed (docs/ingestion.md). */
    const processDrain = (delivery: SpooledDelivery | (Omit<SpooledDelivery, "body"> & { body: Uint8Array | null })) =>
      Effect.gen(function*() {
        const brand = yield* brands.bySiteId(delivery.accountId, delivery.siteId)
        const plan = yield* accounts.planOf(delivery.accountId)
        if (!plan.drainIngest) return yield* Effect.fail(PLAN_DRAIN)
        // An unread (too large) body is refused as unparseable below: nothing of it is stored.
        if (brand.drainSecret !== null && delivery.body !== null) {
          if (delivery.signature === null || delivery.signature.trim() === "") return yield* new SignatureRefused({ reason: "missing" })
          if (!signatureValid(brand.drainSecret, delivery.body, delivery.signature, config.maxInflatedBytes)) {
            return yield* new SignatureRefused({ reason: "mismatch" })
          }
        }
        const decoded = decoder.decode(delivery.body, delivery.receivedAt, delivery.format)
        const { hits, referrals } = split(decoded.requests, delivery.id)
        const stored = yield* store({ brand, plan, channel: "drain", receivedAt: delivery.receivedAt, hits, referrals })
        return { ...stored, scanned: decoded.scanned, skipped: decoded.scanned - hits.length, format: decoded.readAs ?? delivery.format ?? "auto" } satisfies DrainResult
      })

    /**
     * docs/ingestion.md: a failure to persist still answers 200. The delivery goes to the spool
     * (durably, before answering) when it holds anything to store; accepted is 0 (nothing is
     * stored yet), the monthly figures are the last ones known.
     */
    const spoolInstead = (delivery: SpooledDelivery, outage: SqlError) =>
      Effect.gen(function*() {
        const decoded = decoder.decode(delivery.body, delivery.receivedAt, delivery.format)
        const { hits, referrals } = split(decoded.requests, delivery.id)
        if (hits.length + referrals.length > 0) {
          // Neither the database nor the disk: the sender must retry, so 503 (the edge's answer to a SqlError).
          yield* spool.append(delivery).pipe(Effect.catchAll(() => Effect.die(outage)))
          yield* Effect.logWarning(`database unavailable: drain delivery ${delivery.id} spooled (${hits.length} crawler hits)`)
        }
        const known = lastKnown.get(delivery.accountId)
        return {
          accepted: 0,
          scanned: decoded.scanned,
          skipped: decoded.scanned - hits.length,
          format: decoded.readAs ?? delivery.format ?? "auto",
          monthly_used: known?.used ?? 0,
          monthly_cap: known?.cap ?? 0
        } satisfies DrainResult
      })

    const drain: IngestionShape["drain"] = (input) =>
      Effect.gen(function*() {
        const siteId = input.siteId?.trim() ?? ""
        if (siteId === "") return yield* Effect.fail(MISSING_SITE)
        const givenFormat = input.format?.trim().toLowerCase() || "auto"
        if (!isLogFormat(givenFormat)) return yield* Effect.fail(BAD_FORMAT(input.format ?? ""))
        const format: LogFormat = givenFormat
        const delivery = {
          id: crypto.randomUUID(),
          receivedAt: (yield* now).getTime(),
          accountId: input.accountId,
          siteId,
          signature: input.signature ?? null,
          body: input.body,
          format
        }
        return yield* processDrain(delivery).pipe(
          Effect.catchAllDefect((defect) =>
            defect instanceof SqlError && delivery.body !== null
              ? spoolInstead({ ...delivery, body: delivery.body }, defect)
              : Effect.die(defect)
          ),
          // Ingestion health (docs/webhooks.md), refused deliveries included.
          Effect.onExit((exit) => {
            const result = Exit.isSuccess(exit) ? exit.value : null
            const refused = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : null
            const signatureFailure = refused?._tag === "Some" && refused.value._tag === "SignatureRefused"
            return alerts.delivery({ accountId: input.accountId, siteId, channel: "drain", format: result?.format ?? format, records: result?.scanned ?? 0, accepted: result?.accepted ?? 0, unparseable: result !== null && result.scanned === 0 ? 1 : 0, signatureFailure })
          }),
          Effect.catchTag("SignatureRefused", (refused) => Effect.fail(signatureForbidden(refused)))
        )
      })

    const batch: IngestionShape["batch"] = (accountId, input) => {
      let invalid = 0
      return Effect.gen(function*() {
        if (input.records.length > MAX_BATCH_RECORDS) return yield* Effect.fail(TOO_MANY)
        const channel = input.channel === undefined || input.channel.trim() === "" ? "api" : input.channel.trim()
        if (!isBatchChannel(channel)) return yield* Effect.fail(BAD_CHANNEL)
        const brand = yield* brands.bySiteId(accountId, input.site_id.trim())
        const plan = yield* accounts.planOf(accountId)
        if (!plan.paid || !plan.batchIngest) return yield* Effect.fail(PLAN_BATCH)
        const receivedAt = (yield* now).getTime()
        const requests: Array<LogRequest> = []
        for (const record of input.records) {
          const request = fromBatchRecord(record, receivedAt)
          if (request !== null) requests.push(request)
        }
        invalid = input.records.length - requests.length
        const { hits, referrals } = split(requests, crypto.randomUUID())
        return yield* store({ brand, plan, channel, receivedAt, hits, referrals })
      }).pipe(Effect.onExit((exit) => alerts.delivery({ accountId, siteId: input.site_id.trim(), channel: isBatchChannel(input.channel?.trim() ?? "") ? input.channel!.trim() : "api", format: "json", records: input.records.length, accepted: Exit.isSuccess(exit) ? exit.value.accepted : 0, unparseable: invalid, signatureFailure: false })))
    }

    const replay: IngestionShape["replay"] = (delivery) =>
      processDrain(delivery).pipe(
        Effect.catchTag("SignatureRefused", (refused) => Effect.fail(signatureForbidden(refused))),
        Effect.map((result): ReplayOutcome => ({ _tag: "Stored", result })),
        Effect.catchAll((error) => Effect.succeed<ReplayOutcome>({ _tag: "Dropped", reason: error.error }))
      )

    const tag: IngestionShape["tag"] = (input) =>
      Effect.gen(function*() {
        const found = yield* brands.findSite(input.siteId)
        if (found._tag === "None") return yield* Effect.fail(UNKNOWN_SITE)
        const brand = found.value
        const agent = input.ua === "" ? null : classify(input.ua)
        if (agent === null) return 0
        const receivedAt = (yield* now).getTime()
        const { path, query } = splitPath(input.url)
        const hit: HitRow = {
          recordId: null,
          key: `tag:${crypto.randomUUID()}`,
          ts: receivedAt,
          method: "GET",
          host: input.host.toLowerCase().slice(0, 255),
          path,
          query,
          ua: input.ua.slice(0, 1024),
          referrer: input.referrer.slice(0, 1024),
          // The tag runs in the loaded page: it cannot see the HTTP status.
          status: null,
          clientIp: input.clientIp,
          country: null,
          bot: agent.bot,
          vendor: agent.vendor,
          kind: agent.kind
        }
        // Anonymous (the site id is public): marked unauthenticated, and never counted in nor refused by
        // the server-log monthly cap; the tag's own allowance is the collect endpoint's (docs/security.md).
        // Nor does it raise crawler.new_bot: anyone could forge one (docs/webhooks.md).
        const verdicts = yield* verification.verdicts([hit])
        const stored = yield* hitsRepo.store({
          accountId: brand.accountId,
          brandId: brand.id,
          channel: "tag",
          month: monthStart(new Date(receivedAt)),
          hits: [{ ...hit, ...verdicts[0] }],
          limit: 1,
          cap: null,
          referrals: [],
          unauthenticated: true,
          countUsage: false
        }).pipe(Effect.orDie)
        yield* alerts.delivery({ accountId: brand.accountId, siteId: input.siteId, channel: "tag", format: "beacon", records: 1, accepted: stored.stored, unparseable: 0, signatureFailure: false })
        return stored.stored
      })

    return { batch, drain, replay, tag, spoofedCounts: hitsRepo.spoofedCounts }
  })
).pipe(Layer.provide([AccountsLive, BrandsLive, ClassifierLive, VerificationLive, DrainDecoderLive, SpoolLive]))

/** What one pass over the spool did; `outage` says why it stopped early (the database is down), else null. */
export interface SpoolPass {
  readonly replayed: number
  readonly outage: string | null
}

/**
 * One pass over the spool, files in order of arrival, each stored like live traffic (the same
 * checks, the cap included; keys make it idempotent): a stored or dropped delivery leaves the
 * spool; an unreadable file, or one that fails for another reason than an outage (a bug, data the
 * database refuses), moves to spool/failed; at an outage the pass stops and keeps the order. The
 * background replay and graceful shutdown both run it.
 */
export const replaySpool: Effect.Effect<SpoolPass, never, Spool | Ingestion> = Effect.gen(function*() {
  const spool = yield* Spool
  const ingestion = yield* Ingestion
  let replayed = 0
  for (const name of yield* spool.pending) {
    const delivery = yield* spool.read(name)
    if (delivery === null) {
      yield* Effect.logError(`spool: unreadable file ${name}, moved to failed/`)
      yield* spool.quarantine(name)
      continue
    }
    const exit = yield* Effect.exit(ingestion.replay(delivery))
    if (Exit.isSuccess(exit)) {
      if (exit.value._tag === "Stored") metrics.observeIngest("replay", exit.value.result)
      if (exit.value._tag === "Dropped") {
        yield* Effect.logWarning(`spool: delivery ${delivery.id} dropped on replay: ${exit.value.reason}`)
      }
      yield* spool.remove(name)
      replayed++
      continue
    }
    if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
    const defect = Cause.squash(exit.cause)
    if (isOutage(defect)) return { replayed, outage: Cause.pretty(exit.cause).split("\n")[0] ?? "database unavailable" }
    yield* Effect.logError(`spool: delivery ${delivery.id} cannot be replayed, moved to failed/`, exit.cause)
    yield* spool.quarantine(name)
  }
  return { replayed, outage: null }
})

/**
 * The background replay of the spool (replaySpool, whenever a delivery is spooled and every
 * SPOOL_POLL_MS). While the database stays down it backs off, doubling from SPOOL_RETRY_MIN_MS
 * to SPOOL_RETRY_MAX_MS.
 */
export const SpoolReplayLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const spool = yield* Spool
    const config = yield* IngestionConfig
    const context = yield* Effect.context<Spool | Ingestion>()
    let delay = config.spoolRetryMinMs

    /** True when the spool was emptied, false when the database is still down. */
    const pass: Effect.Effect<boolean> = Effect.flatMap(Effect.provide(replaySpool, context), ({ outage, replayed }) => {
      if (replayed > 0) delay = config.spoolRetryMinMs
      if (outage === null) return Effect.succeed(true)
      const wait = delay
      delay = Math.min(config.spoolRetryMaxMs, delay * 2)
      return Effect.as(Effect.sleep(wait), false)
    })

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(pass, (emptied) =>
          emptied ? Effect.raceFirst(spool.appended, Effect.sleep(config.spoolPollMs)) : Effect.void)
      )
    )
  })
).pipe(Layer.provide([IngestionLive, SpoolLive]))
