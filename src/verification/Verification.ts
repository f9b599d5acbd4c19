import { Cause, Config, Context, Deferred, Effect, FiberId, Layer, Schedule, Schema, Stream } from "effect"
import { Classifier, ClassifierLive } from "../catalog/Classifier.js"
import { Database, Listening } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type Ip, parseIp } from "./Cidr.js"
import { type PendingHit, type Verdict, VerificationRepo, type VerdictUpdate } from "./Repo.js"
import { Resolver } from "./Resolver.js"
import { bundledSnapshot, indexSnapshot, type RangeIndex, type RangeSnapshot, RangeSnapshotSchema } from "./Snapshot.js"
import { type DirectoryKey, keyOfJwk, signatureAgentOrigin, verifyRequest } from "./WebBotAuth.js"
import directoriesJson from "./ranges/key-directories.json"

/**
 * Verified agents (docs/verification.md): the verdict of a crawler hit from the operator's published
 * IP ranges, forward-confirmed reverse DNS, or a Web Bot Auth signature; the range snapshot and its
 * reload across processes; the background pass settling hits whose DNS answer came late.
 */

export type Method = "ip_ranges" | "reverse_dns" | "web_bot_auth"

/** What verification reads of a crawler hit. */
export interface VerifyInput {
  readonly bot: string
  readonly vendor: string
  readonly clientIp: string | null
  /** Unix milliseconds (a signature's validity is judged at the hit's time). */
  readonly ts: number
  readonly method: string
  readonly host: string
  readonly path: string
  readonly query: string
  readonly signature?: string | null | undefined
  readonly signatureInput?: string | null | undefined
  readonly signatureAgent?: string | null | undefined
}

export interface VerifyOutcome {
  readonly verification: Verdict
  /** Stored unverified while a reverse-DNS answer is awaited; the background pass settles it. */
  readonly verifyPending: boolean
}

export interface Explained {
  readonly verdict: Verdict
  readonly methods: ReadonlyArray<Method>
  readonly why: string
}

export interface SnapshotInfo {
  readonly date: string
  readonly read_from: string
  readonly files: number
  readonly prefixes: number
}

export interface VerificationShape {
  /** Verdicts of a delivery's hits, in order. Waits for DNS at most VERIFY_DNS_WAIT_MS. */
  readonly verdicts: (hits: ReadonlyArray<VerifyInput>) => Effect.Effect<ReadonlyArray<VerifyOutcome>>
  /** The verdict of one request and why, waiting for DNS as long as it takes (cli verify). */
  readonly explain: (input: VerifyInput) => Effect.Effect<Explained>
  /** The methods the operator of `bot` publishes (empty: the agent can only be unverified). */
  readonly methodsOf: (bot: string) => ReadonlyArray<Method>
  /** The prefixes (CIDR text) the snapshot in use publishes for `bot`; empty when none (the demo draws addresses from them). */
  readonly rangesOf: (bot: string) => ReadonlyArray<string>
  readonly snapshot: () => SnapshotInfo
  /** Re-reads the newest saved snapshot (what a NOTIFY on RANGES_CHANNEL triggers). */
  readonly reload: Effect.Effect<void>
  /** One pass over the hits awaiting DNS; returns how many were settled. */
  readonly settlePending: Effect.Effect<number>
}

export class Verification extends Context.Tag("Verification")<Verification, VerificationShape>() {}

export const RANGES_CHANNEL = "aiv_ranges_updated"

export interface VerificationConfigShape {
  /** How long a delivery waits for reverse-DNS answers before storing the rest as unverified (pending). */
  readonly dnsWaitMs: number
  /** Reverse-DNS checks in flight at once (each is a PTR and a forward lookup). */
  readonly dnsConcurrency: number
  /** A check taking longer is abandoned (the hit stays pending until the next pass). */
  readonly dnsTimeoutMs: number
  /** Interval of the background pass. */
  readonly passEveryMs: number
  /** Hits still unanswered after this long are closed as unverified. */
  readonly giveUpAfterMs: number
  /** Answers are cached this long, for at most cacheSize addresses. */
  readonly cacheTtlMs: number
  readonly cacheSize: number
  /** An address whose check failed (not a "no such name" answer) or timed out is not checked again for this long. */
  readonly negativeTtlMs: number
  /** New addresses a delivery starts checks for, at most; the others wait for the background pass. */
  readonly dnsPerDelivery: number
}

export class VerificationConfig extends Context.Tag("VerificationConfig")<VerificationConfig, VerificationConfigShape>() {}

export const VERIFICATION_DEFAULTS: VerificationConfigShape = {
  dnsWaitMs: 20,
  dnsConcurrency: 16,
  dnsTimeoutMs: 3_000,
  passEveryMs: 30_000,
  giveUpAfterMs: 86_400_000,
  cacheTtlMs: 6 * 3_600_000,
  cacheSize: 50_000,
  negativeTtlMs: 300_000,
  dnsPerDelivery: 16
}

export const VerificationConfigLive = Layer.effect(
  VerificationConfig,
  Effect.map(
    Config.all({
      dnsWaitMs: Config.integer("VERIFY_DNS_WAIT_MS").pipe(Config.withDefault(VERIFICATION_DEFAULTS.dnsWaitMs)),
      dnsConcurrency: Config.integer("VERIFY_DNS_CONCURRENCY").pipe(Config.withDefault(VERIFICATION_DEFAULTS.dnsConcurrency)),
      passEveryMs: Config.integer("VERIFY_PASS_MS").pipe(Config.withDefault(VERIFICATION_DEFAULTS.passEveryMs))
    }),
    (env): VerificationConfigShape => ({
      ...VERIFICATION_DEFAULTS,
      dnsWaitMs: Math.max(0, env.dnsWaitMs),
      dnsConcurrency: Math.max(1, env.dnsConcurrency),
      passEveryMs: Math.max(1_000, env.passEveryMs)
    })
  ).pipe(Effect.orDie)
)

export const verificationConfigTest = (overrides: Partial<VerificationConfigShape> = {}) =>
  Layer.succeed(VerificationConfig, { ...VERIFICATION_DEFAULTS, ...overrides })

/** Reverse-DNS checks running or queued, at most (memory and work stay bounded when DNS is slow). */
const MAX_IN_FLIGHT = 256

/** An address in one canonical text form, so a forward answer compares equal to the client IP. */
const ipKey = (ip: Ip) => (ip.v === 4 ? `4:${ip.n}` : `6:${[...ip.w].join(".")}`)

const hostMatches = (host: string, suffixes: ReadonlyArray<string>) => {
  const h = host.toLowerCase().replace(/\.$/, "")
  return suffixes.some((s) => h === s || h.endsWith(`.${s}`))
}

/** Key directories of Web Bot Auth, snapshotted with the ranges (docs/verification.md). */
const DirectorySchema = Schema.Struct({
  signature_agent: Schema.String,
  operator: Schema.String,
  source_url: Schema.String,
  keys: Schema.Array(Schema.Struct({ kty: Schema.String, crv: Schema.String, x: Schema.String }))
})
export type KeyDirectory = typeof DirectorySchema.Type
export const DirectoriesSchema = Schema.Array(DirectorySchema)

/** A saved snapshot: the ranges and, optionally, the key directories. */
export const SavedSnapshotSchema = Schema.Struct({
  ...RangeSnapshotSchema.fields,
  directories: Schema.optional(DirectoriesSchema)
})
export type SavedSnapshot = typeof SavedSnapshotSchema.Type

interface Loaded {
  readonly ranges: RangeIndex
  /** Operator (catalog vendor) -> origin -> keys. */
  readonly directories: ReadonlyMap<string, { readonly operator: string; readonly keys: ReadonlyArray<DirectoryKey> }>
}

const load = (snapshot: RangeSnapshot, directories: ReadonlyArray<KeyDirectory>): Loaded => ({
  ranges: indexSnapshot(snapshot),
  directories: new Map(directories.map((d) => [
    signatureAgentOrigin(`"${d.signature_agent}"`) ?? d.signature_agent,
    { operator: d.operator, keys: d.keys.map(keyOfJwk).filter((k) => k !== null) }
  ]))
})

export const VerificationLive = Layer.scoped(
  Verification,
  Effect.gen(function*() {
    const repo = yield* VerificationRepo
    const resolver = yield* Resolver
    const database = yield* Database
    const config = yield* VerificationConfig
    const { agents } = yield* Classifier

    const rdnsOf = new Map<string, ReadonlyArray<string>>()
    const vendorOf = new Map<string, string>()
    for (const a of agents) {
      vendorOf.set(a.bot, a.vendor)
      const suffixes = a.verification?.reverse_dns ?? []
      if (suffixes.length > 0) rdnsOf.set(a.bot, suffixes.map((s) => s.toLowerCase()))
    }

    let state: Loaded = load(bundledSnapshot(), defaultDirectories())

    const reload = Effect.gen(function*() {
      const latest = yield* repo.latestSnapshot
      if (latest === null) return
      const decoded = Schema.decodeUnknownEither(Schema.parseJson(SavedSnapshotSchema))(latest.json)
      if (decoded._tag === "Left") {
        yield* Effect.logWarning(`verification: saved range snapshot ${latest.id} is malformed; keeping the current one`)
        return
      }
      state = load(decoded.right, decoded.right.directories ?? defaultDirectories())
      yield* Effect.logInfo(`verification: range snapshot of ${decoded.right.date} loaded (${decoded.right.files.length} files)`)
    })

    const methodsOf = (bot: string): ReadonlyArray<Method> => {
      const out: Array<Method> = []
      if (state.ranges.byBot.has(bot)) out.push("ip_ranges")
      if (rdnsOf.has(bot)) out.push("reverse_dns")
      const vendor = vendorOf.get(bot)
      if (vendor !== undefined && [...state.directories.values()].some((d) => d.operator === vendor && d.keys.length > 0)) {
        out.push("web_bot_auth")
      }
      return out
    }

    // Reverse DNS: confirmed names per address, bounded in size and age.
    const cache = new Map<string, { names: ReadonlyArray<string>; at: number }>()
    // Negative cache: when an address's check last failed or timed out (it stays unanswered meanwhile).
    const failedAt = new Map<string, number>()
    // Checks running or queued, each with what its waiters await; `queue` holds those not started yet, in order.
    const inFlight = new Map<string, Deferred.Deferred<void>>()
    const queue = new Map<string, { raw: string; at: number }>()
    let workers = 0
    // Addresses of pending hits the background pass could not answer yet, and when it first tried.
    const waitingSince = new Map<string, number>()

    const cached = (key: string, at: number) => {
      const entry = cache.get(key)
      if (entry === undefined) return undefined
      if (at - entry.at > config.cacheTtlMs) {
        cache.delete(key)
        return undefined
      }
      return entry.names
    }

    const remember = <V>(map: Map<string, V>, key: string, value: V) => {
      map.delete(key)
      if (map.size >= config.cacheSize) map.delete(map.keys().next().value!)
      map.set(key, value)
    }

    /** Forward-confirmed names of `raw` into the cache; a transient failure or timeout goes to the negative cache. */
    const lookUp = (raw: string, key: string, at: number) =>
      Effect.gen(function*() {
        const names = yield* resolver.reverse(raw.trim()).pipe(
          Effect.catchTag("ResolveError", (e) => e.reason === "not_found" ? Effect.succeed([]) : Effect.fail(e))
        )
        const confirmed: Array<string> = []
        for (const name of names.slice(0, 5)) {
          const addresses = yield* resolver.forward(name).pipe(
            Effect.catchTag("ResolveError", (e) => e.reason === "not_found" ? Effect.succeed([]) : Effect.fail(e))
          )
          if (addresses.some((a) => {
            const p = parseIp(a)
            return p !== null && ipKey(p) === key
          })) confirmed.push(name.toLowerCase())
        }
        failedAt.delete(key)
        remember(cache, key, { names: confirmed, at: (yield* now).getTime() })
      }).pipe(
        Effect.timeout(config.dnsTimeoutMs),
        Effect.catchAllCause(() => Effect.sync(() => remember(failedAt, key, at)))
      )

    // A fixed pool of at most dnsConcurrency workers drains the queue: one fiber per worker, not per address,
    // and no semaphore whose every release wakes every waiter (that cost grew with the square of the backlog).
    const worker: Effect.Effect<void> = Effect.suspend(() => {
      const next = queue.entries().next()
      if (next.done === true) {
        workers--
        return Effect.void
      }
      const [key, { raw, at }] = next.value
      queue.delete(key)
      return lookUp(raw, key, at).pipe(
        Effect.ensuring(Effect.suspend(() => {
          const done = inFlight.get(key)
          inFlight.delete(key)
          return done === undefined ? Effect.void : Deferred.succeed(done, undefined)
        })),
        Effect.zipRight(worker)
      )
    })

    /**
     * Queues a check of `ip` unless one is running or queued (its completion is returned), it failed
     * within the negative TTL, or the backlog is full (undefined: the hit waits for a later pass).
     */
    const enqueue = (raw: string, ip: Ip, at: number): { done: Deferred.Deferred<void>; started: boolean } | undefined => {
      const key = ipKey(ip)
      const running = inFlight.get(key)
      if (running !== undefined) return { done: running, started: false }
      const failed = failedAt.get(key)
      if (failed !== undefined && at - failed < config.negativeTtlMs) return undefined
      if (inFlight.size >= MAX_IN_FLIGHT) return undefined
      const done = Deferred.unsafeMake<void>(FiberId.none)
      inFlight.set(key, done)
      queue.set(key, { raw, at })
      return { done, started: true }
    }

    /** Starts workers for the queue, up to dnsConcurrency; they run on after the caller (daemons). */
    const startWorkers = Effect.suspend(() => {
      const n = Math.min(config.dnsConcurrency - workers, queue.size)
      if (n <= 0) return Effect.void
      workers += n
      return Effect.forEach(Array.from({ length: n }), () => Effect.forkDaemon(worker), { discard: true })
    })

    const awaitAll = (done: ReadonlyArray<Deferred.Deferred<void>>) => Effect.forEach(done, Deferred.await, { discard: true })

    type Step = { readonly verdict: Verdict; readonly why: string } | { readonly dns: Ip; readonly raw: string }

    /** Everything but an unanswered DNS check; `at` is now (for the cache). */
    const decide = (hit: VerifyInput, at: number): Step => {
      const ranges = state.ranges.byBot.get(hit.bot)
      const suffixes = rdnsOf.get(hit.bot)
      const vendor = vendorOf.get(hit.bot) ?? hit.vendor
      const signed = hit.signature && hit.signatureInput && hit.signatureAgent
      let signatureFailure: string | null = null
      if (signed) {
        const origin = signatureAgentOrigin(hit.signatureAgent!)
        const directory = origin === null ? undefined : state.directories.get(origin)
        if (directory === undefined || directory.operator !== vendor) {
          signatureFailure = `Signature-Agent ${hit.signatureAgent} is not a key directory of ${vendor}`
        } else {
          const check = verifyRequest({
            method: hit.method,
            authority: hit.host,
            path: hit.path,
            query: hit.query,
            headers: { "signature-agent": hit.signatureAgent! },
            signature: hit.signature!,
            signatureInput: hit.signatureInput!
          }, directory.keys, Math.floor(hit.ts / 1000))
          if (check.valid) return { verdict: "verified", why: `valid Web Bot Auth signature of ${origin} (key ${check.kid})` }
          signatureFailure = `Web Bot Auth signature not valid: ${check.reason}`
        }
      }
      const hasWba = methodsOf(hit.bot).includes("web_bot_auth")
      if (ranges === undefined && suffixes === undefined && !hasWba) {
        return { verdict: "unverified", why: `${vendor} publishes no verification method for ${hit.bot}` }
      }
      if (hit.clientIp === null || hit.clientIp.trim() === "") {
        return { verdict: "unverified", why: "no client IP" }
      }
      const ip = parseIp(hit.clientIp)
      if (ip === null) return { verdict: "unverified", why: `client IP ${hit.clientIp} is not an IP address` }
      if (ranges !== undefined && ranges.has(ip)) {
        return { verdict: "verified", why: `${hit.clientIp} is in ${vendor}'s published ranges for ${hit.bot}` }
      }
      if (suffixes !== undefined) {
        const names = cached(ipKey(ip), at)
        if (names === undefined) return { dns: ip, raw: hit.clientIp }
        const match = names.find((n) => hostMatches(n, suffixes))
        if (match !== undefined) return { verdict: "verified", why: `${hit.clientIp} resolves to ${match}, which resolves back to it` }
        return {
          verdict: "spoofed",
          why: names.length === 0
            ? `${hit.clientIp} has no forward-confirmed reverse DNS name under ${suffixes.join(", ")}`
            : `${hit.clientIp} resolves to ${names.join(", ")}, not under ${suffixes.join(", ")}`
        }
      }
      const failed = [
        ranges !== undefined ? `${hit.clientIp} is outside ${vendor}'s published ranges for ${hit.bot}` : null,
        hasWba ? signatureFailure ?? "no Web Bot Auth signature" : null
      ].filter((s) => s !== null)
      return { verdict: "spoofed", why: failed.join("; ") }
    }

    const verdicts: VerificationShape["verdicts"] = (hits) =>
      Effect.gen(function*() {
        const at = (yield* now).getTime()
        const out: Array<VerifyOutcome> = new Array(hits.length)
        const waiting: Array<number> = []
        const seen = new Set<string>()
        const awaited: Array<Deferred.Deferred<void>> = []
        let started = 0
        for (let i = 0; i < hits.length; i++) {
          const step = decide(hits[i]!, at)
          if ("verdict" in step) out[i] = { verification: step.verdict, verifyPending: false }
          else {
            waiting.push(i)
            const key = ipKey(step.dns)
            if (seen.has(key)) continue
            seen.add(key)
            // Bounded per delivery: past dnsPerDelivery new addresses, the hits wait for the background pass.
            const running = inFlight.get(key)
            if (running !== undefined) awaited.push(running)
            else if (started < config.dnsPerDelivery) {
              const check = enqueue(step.raw, step.dns, at)
              if (check !== undefined) {
                awaited.push(check.done)
                if (check.started) started++
              }
            }
          }
        }
        if (waiting.length === 0) return out
        // The checks go on after the wait (daemon workers), filling the cache for the background pass.
        yield* startWorkers
        if (config.dnsWaitMs > 0 && awaited.length > 0) {
          yield* awaitAll(awaited).pipe(Effect.timeout(config.dnsWaitMs), Effect.ignore)
        }
        for (const i of waiting) {
          const step = decide(hits[i]!, at)
          out[i] = "verdict" in step
            ? { verification: step.verdict, verifyPending: false }
            : { verification: "unverified", verifyPending: true }
        }
        return out
      })

    const explain: VerificationShape["explain"] = (input) =>
      Effect.gen(function*() {
        const at = (yield* now).getTime()
        let step = decide(input, at)
        if (!("verdict" in step)) {
          // Waits as long as it takes: straight to the resolver, whatever the negative cache says.
          yield* lookUp(step.raw, ipKey(step.dns), at)
          step = decide(input, at)
        }
        const methods = methodsOf(input.bot)
        return "verdict" in step
          ? { verdict: step.verdict, methods, why: step.why }
          : { verdict: "unverified" as const, methods, why: "reverse DNS did not answer in time" }
      })

    const settlePending: VerificationShape["settlePending"] = Effect.gen(function*() {
      const hits: ReadonlyArray<PendingHit> = yield* repo.pending(500)
      if (hits.length === 0) return 0
      const at = (yield* now).getTime()
      const awaited = new Map<string, Deferred.Deferred<void>>()
      for (const h of hits) {
        const ip = parseIp(h.clientIp)
        if (ip === null || awaited.has(ipKey(ip)) || cached(ipKey(ip), at) !== undefined) continue
        const check = enqueue(h.clientIp, ip, at)
        if (check !== undefined) awaited.set(ipKey(ip), check.done)
      }
      yield* startWorkers
      yield* awaitAll([...awaited.values()])
      const updates: Array<VerdictUpdate> = []
      const givenUp = new Set<string>()
      for (const h of hits) {
        const step = decide({
          bot: h.bot,
          vendor: vendorOf.get(h.bot) ?? "",
          clientIp: h.clientIp,
          ts: h.ts.getTime(),
          method: "GET",
          host: "",
          path: "/",
          query: ""
        }, at)
        const ip = parseIp(h.clientIp)
        const waitKey = ip === null ? h.clientIp : ipKey(ip)
        if ("verdict" in step) {
          updates.push({ accountId: h.accountId, brandId: h.brandId, key: h.key, verdict: step.verdict })
          waitingSince.delete(waitKey)
        } else {
          // The wait counts from when this process first tried the address, not from the hit's own
          // time: a log shipped days late still gets its lookups before it is given up.
          const since = waitingSince.get(waitKey)
          if (since === undefined) {
            if (waitingSince.size >= config.cacheSize) waitingSince.delete(waitingSince.keys().next().value!)
            waitingSince.set(waitKey, at)
          } else if (at - since > config.giveUpAfterMs) {
            updates.push({ accountId: h.accountId, brandId: h.brandId, key: h.key, verdict: "unverified" })
            givenUp.add(waitKey)
          }
        }
      }
      // Forgotten once given up, so a later hit from the address gets a day of its own.
      for (const key of givenUp) waitingSince.delete(key)
      yield* repo.settle(updates)
      return updates.length
    })

    yield* reload.pipe(Effect.catchAllDefect((d) => Effect.logWarning("verification: cannot read saved snapshots", d)))

    // Other processes' `ranges update`: reload when told (the same channel pattern as key revocation).
    // Listening again after the connection was lost: an update may have gone unheard meanwhile.
    let subscribed = false
    yield* database.listen(RANGES_CHANNEL).pipe(
      Stream.runForEach((payload) => {
        if (payload !== Listening) return reload
        if (!subscribed) return Effect.sync(() => (subscribed = true))
        return reload
      }),
      Effect.catchAllCause((cause) => Effect.logWarning(`verification: LISTEN for range updates ended (${Cause.squash(cause)}); again in 5 s`)),
      Effect.repeat(Schedule.spaced("5 seconds")),
      Effect.forkScoped
    )
    yield* settlePending.pipe(
      Effect.catchAllDefect((d) => Effect.logWarning("verification: background pass failed", d).pipe(Effect.as(0))),
      Effect.repeat(Schedule.spaced(config.passEveryMs)),
      Effect.delay(config.passEveryMs),
      Effect.forkScoped
    )

    return {
      verdicts,
      explain,
      methodsOf,
      rangesOf: (bot) => state.ranges.snapshot.files.flatMap((file) => (file.agents.includes(bot) ? file.prefixes : [])),
      snapshot: () => ({
        date: state.ranges.snapshot.date,
        read_from: state.ranges.snapshot.read_from,
        files: state.ranges.snapshot.files.length,
        prefixes: state.ranges.snapshot.files.reduce((n, f) => n + f.prefixes.length, 0)
      }),
      reload: reload.pipe(Effect.orDie),
      settlePending
    }
  })
).pipe(Layer.provide(ClassifierLive))

/** The key directories bundled with the ranges (src/verification/ranges/key-directories.json). */
export const defaultDirectories = (): ReadonlyArray<KeyDirectory> =>
  Schema.decodeUnknownSync(DirectoriesSchema)(directoriesJson)
