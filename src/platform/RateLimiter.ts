import { HttpServerResponse } from "@effect/platform"
import { RedisClient } from "bun"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { RATE_LIMITED } from "./HttpErrors.js"
import { AppConfig, type RateLimitRule, type RateLimitRules } from "./Config.js"
import { metrics } from "./Metrics.js"
import { errorMessage } from "./Guards.js"

/**
 * Token buckets (docs/operations.md "Rate limits"). A bucket holds up to `limit` tokens and
 * refills at limit / windowSeconds per second; a request takes one token from every bucket it
 * is checked against, or none when any of them is empty (then 429).
 *
 * With REDIS_URL the buckets live in Redis and every server process shares them: one Lua script
 * reads, refills and takes from all the buckets of a request atomically, on Redis's clock. Without
 * it they live in this process. When Redis does not answer within REDIS_TIMEOUT_MS the request is
 * let through (fail open: a Redis outage must not take the API down) and the miss is counted in
 * /metrics (aiv_rate_limit_store_errors_total).
 */

export interface RateLimitCheck {
  /** Bucket name, e.g. `key:<hash>`, `ip:203.0.113.9`, `site:<uuid>`. */
  readonly bucket: string
  readonly rule: RateLimitRule
  /** Tokens this request takes from the bucket (default 1): a JSON-RPC batch takes one per call. */
  readonly cost?: number
}

export interface RateLimitDecision {
  readonly allowed: boolean
  /** Of the bucket reported: the fullest-drained one, or the one that refused. */
  readonly limit: number
  readonly remaining: number
  /** Seconds until that bucket is full again; when refused, until it has a token again (= retryAfterSeconds). */
  readonly resetSeconds: number
  /** Seconds until a token is available (when refused); 0 when allowed. */
  readonly retryAfterSeconds: number
}

export interface RateLimiterShape {
  readonly store: "redis" | "memory"
  readonly rules: RateLimitRules
  /** Takes one token from each bucket (all or none). None when no rule applies (all off). */
  readonly check: (checks: ReadonlyArray<RateLimitCheck>) => Effect.Effect<Option.Option<RateLimitDecision>>
  /**
   * The same check, answered at once when the buckets are in this process (no Redis): the
   * decision, or null when no rule applies. Undefined with Redis: use `check`.
   */
  readonly checkNow: ((checks: ReadonlyArray<RateLimitCheck>) => RateLimitDecision | null) | undefined
  /** The JavaScript tag's collect endpoint: per site (RATE_LIMIT_COLLECT_SITE). */
  readonly checkSite: (siteId: string) => Effect.Effect<Option.Option<RateLimitDecision>>
  /**
   * The tag's whole allowance: per site (a minute's and a day's) and per client IP (a day's),
   * RATE_LIMIT_COLLECT_SITE, RATE_LIMIT_COLLECT_SITE_DAY, RATE_LIMIT_COLLECT_IP_DAY.
   */
  readonly checkCollect: (siteId: string, clientIp: string) => Effect.Effect<Option.Option<RateLimitDecision>>
}

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, RateLimiterShape>() {}

export { RATE_LIMITED }

/** RateLimit-Limit / -Remaining / -Reset (and Retry-After when refused). */
export const rateLimitHeaders = (decision: RateLimitDecision): Record<string, string> => {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds)
  }
  if (!decision.allowed) headers["retry-after"] = String(decision.retryAfterSeconds)
  return headers
}

/** The 429 of a refused request: `{"error":"rate limit exceeded"}` with the headers. */
export const rateLimitedResponse = (decision: RateLimitDecision) =>
  HttpServerResponse.unsafeJson({ error: RATE_LIMITED }, { status: 429, headers: rateLimitHeaders(decision) })

/** Adds the RateLimit headers of a decision to a response (for endpoints that check themselves). */
export const withRateLimitHeaders = (response: HttpServerResponse.HttpServerResponse, decision: Option.Option<RateLimitDecision>) =>
  Option.isSome(decision) ? HttpServerResponse.setHeaders(response, rateLimitHeaders(decision.value)) : response

const active = (checks: ReadonlyArray<RateLimitCheck>) => checks.filter((c) => c.rule.limit > 0 && c.rule.windowSeconds > 0)

/** Tokens per millisecond. */
const rateOf = (rule: RateLimitRule) => rule.limit / (rule.windowSeconds * 1000)

/** The decision from each bucket's tokens after the check (tokens already taken when allowed). */
export const decide = (checks: ReadonlyArray<RateLimitCheck>, tokens: ReadonlyArray<number>, allowed: boolean): RateLimitDecision => {
  let pick = 0
  let pickScore = Infinity
  for (let i = 0; i < checks.length; i++) {
    const rule = checks[i]!.rule
    const t = tokens[i]!
    // Refused: the bucket that makes the client wait longest. Allowed: the one with least room left.
    const score = allowed ? t / rule.limit : -Math.max(0, 1 - t) / rateOf(rule)
    if (score < pickScore) {
      pickScore = score
      pick = i
    }
  }
  const rule = checks[pick]!.rule
  const t = Math.max(0, tokens[pick]!)
  const rate = rateOf(rule)
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((1 - t) / rate / 1000))
  return {
    allowed,
    limit: rule.limit,
    remaining: Math.floor(t),
    // Refused, RateLimit-Reset names the moment Retry-After names (the IETF RateLimit header fields
    // draft asks the two to agree on one response): the refusing bucket has room again then.
    resetSeconds: allowed ? Math.ceil((rule.limit - t) / rate / 1000) : retryAfterSeconds,
    retryAfterSeconds
  }
}

interface MemoryBucket {
  tokens: number
  at: number
  capacity: number
  rate: number
}

const MEMORY_MAX_BUCKETS = 200_000

/** Buckets in this process. Full buckets are forgotten when the map grows large. */
export const makeMemoryStore = (clock: () => number = Date.now) => {
  const buckets = new Map<string, MemoryBucket>()
  const sweep = (now: number) => {
    for (const [name, b] of buckets) if (b.tokens + (now - b.at) * b.rate >= b.capacity) buckets.delete(name)
    if (buckets.size >= MEMORY_MAX_BUCKETS) buckets.clear()
  }
  return {
    size: () => buckets.size,
    take: (checks: ReadonlyArray<RateLimitCheck>): RateLimitDecision => {
      const now = clock()
      const tokens: Array<number> = new Array(checks.length)
      let allowed = true
      for (let i = 0; i < checks.length; i++) {
        const { bucket, rule } = checks[i]!
        const b = buckets.get(bucket)
        const rate = rateOf(rule)
        const t = b === undefined ? rule.limit : Math.min(rule.limit, b.tokens + Math.max(0, now - b.at) * rate)
        tokens[i] = t
        if (t < (checks[i]!.cost ?? 1)) allowed = false
      }
      if (buckets.size >= MEMORY_MAX_BUCKETS) sweep(now)
      for (let i = 0; i < checks.length; i++) {
        const { bucket, rule } = checks[i]!
        if (allowed) tokens[i]! -= checks[i]!.cost ?? 1
        const b = buckets.get(bucket)
        if (b === undefined) buckets.set(bucket, { tokens: tokens[i]!, at: now, capacity: rule.limit, rate: rateOf(rule) })
        else {
          b.tokens = tokens[i]!
          b.at = now
          b.capacity = rule.limit
          b.rate = rateOf(rule)
        }
      }
      return decide(checks, tokens, allowed)
    }
  }
}

/**
 * KEYS: the buckets. ARGV: capacity, rate (tokens per ms) and cost of each, in order. Returns
 * {allowed (0/1), tokens left of each bucket as strings}. Time is Redis's own (TIME), so
 * processes with skewed clocks agree; a bucket expires once it would be full again.
 */
export const TOKEN_BUCKET_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local tokens = {}
local allowed = 1
for i = 1, n do
  local cap = tonumber(ARGV[3 * i - 2])
  local rate = tonumber(ARGV[3 * i - 1])
  local cost = tonumber(ARGV[3 * i])
  local s = redis.call('HMGET', KEYS[i], 't', 'ts')
  local tk = tonumber(s[1])
  local ts = tonumber(s[2])
  if tk == nil or ts == nil then
    tk = cap
    ts = now
  end
  tk = math.min(cap, tk + math.max(0, now - ts) * rate)
  tokens[i] = tk
  if tk < cost then allowed = 0 end
end
local out = { allowed }
for i = 1, n do
  local cap = tonumber(ARGV[3 * i - 2])
  local rate = tonumber(ARGV[3 * i - 1])
  local cost = tonumber(ARGV[3 * i])
  local tk = tokens[i]
  if allowed == 1 then tk = tk - cost end
  redis.call('HSET', KEYS[i], 't', tostring(tk), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[i], math.ceil((cap - tk) / rate) + 1000)
  out[i + 1] = tostring(tk)
end
return out
`

const LUA_SHA = new Bun.CryptoHasher("sha1").update(TOKEN_BUCKET_LUA).digest("hex")

export const REDIS_TIMEOUT_MS = 250

/** The Redis store: one EVALSHA per request (EVAL once when the script is not cached yet). */
export const makeRedisStore = (client: RedisClient, prefix: string) => {
  const run = async (checks: ReadonlyArray<RateLimitCheck>): Promise<RateLimitDecision> => {
    const args: Array<string> = [LUA_SHA, String(checks.length)]
    for (const c of checks) args.push(prefix + "rl:" + c.bucket)
    for (const c of checks) args.push(String(c.rule.limit), String(rateOf(c.rule)), String(c.cost ?? 1))
    let reply: Array<unknown>
    try {
      reply = await client.send("EVALSHA", args)
    } catch (error) {
      if (!errorMessage(error).includes("NOSCRIPT")) throw error
      args[0] = TOKEN_BUCKET_LUA
      reply = await client.send("EVAL", args)
    }
    const allowed = Number(reply[0]) === 1
    const tokens = checks.map((_, i) => Number(reply[i + 1]))
    return decide(checks, tokens, allowed)
  }
  return { run }
}

let lastStoreWarning = 0

export const RateLimiterLive = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const rules = config.rateLimits
    const memory = makeMemoryStore()
    const redisUrl = config.redisUrl
    const redis = Option.isSome(redisUrl)
      ? yield* Effect.acquireRelease(
        Effect.sync(() =>
          new RedisClient(Redacted.value(redisUrl.value), {
            connectionTimeout: 2_000,
            autoReconnect: true,
            // Commands wait for a (re)connection; the check's own timeout bounds the wait.
            enableOfflineQueue: true
          })
        ).pipe(Effect.tap((client) => Effect.sync(() => client.connect().catch(() => undefined)))),
        (client) => Effect.sync(() => client.close())
      )
      : undefined
    const store = redis === undefined ? undefined : makeRedisStore(redis, config.redisPrefix)

    const viaRedis = (checks: ReadonlyArray<RateLimitCheck>) =>
      Effect.async<Option.Option<RateLimitDecision>>((resume) => {
        let done = false
        const timer = setTimeout(() => {
          if (done) return
          done = true
          failOpen(new Error(`no answer within ${REDIS_TIMEOUT_MS} ms`))
          resume(Effect.succeed(Option.none()))
        }, REDIS_TIMEOUT_MS)
        store!.run(checks).then(
          (decision) => {
            if (done) return
            done = true
            clearTimeout(timer)
            resume(Effect.succeed(Option.some(decision)))
          },
          (error) => {
            if (done) return
            done = true
            clearTimeout(timer)
            failOpen(error)
            resume(Effect.succeed(Option.none()))
          }
        )
      })

    const failOpen = (error: unknown) => {
      metrics.rateLimitStoreErrors++
      const now = Date.now()
      if (now - lastStoreWarning > 10_000) {
        lastStoreWarning = now
        // Not through Effect's logger: this runs in a promise callback. The URL is never printed.
        console.error(JSON.stringify({
          timestamp: new Date(now).toISOString(),
          logLevel: "WARN",
          message: "rate limit store (Redis) unavailable: requests are let through",
          error: errorMessage(error).slice(0, 200)
        }))
      }
    }

    const takeNow = (checks: ReadonlyArray<RateLimitCheck>): RateLimitDecision | null => {
      const on = active(checks)
      if (on.length === 0) return null
      const decision = memory.take(on)
      if (!decision.allowed) metrics.rateLimited++
      return decision
    }

    const check: RateLimiterShape["check"] = (checks) => {
      if (store === undefined) return Effect.sync(() => Option.fromNullable(takeNow(checks)))
      const on = active(checks)
      if (on.length === 0) return Effect.succeed(Option.none())
      return Effect.tap(viaRedis(on), (decision) =>
        Effect.sync(() => {
          if (Option.isSome(decision) && !decision.value.allowed) metrics.rateLimited++
        }))
    }

    return RateLimiter.of({
      store: store === undefined ? "memory" : "redis",
      rules,
      check,
      checkNow: store === undefined ? takeNow : undefined,
      checkSite: (siteId) => check([{ bucket: `site:${siteId}`, rule: rules.collectSite }]),
      checkCollect: (siteId, clientIp) => {
        const checks: Array<RateLimitCheck> = [{ bucket: `site:${siteId}`, rule: rules.collectSite }]
        if (rules.collectSiteDay !== undefined) checks.push({ bucket: `site-day:${siteId}`, rule: rules.collectSiteDay })
        if (rules.collectIpDay !== undefined) checks.push({ bucket: `collect-ip-day:${clientIp}`, rule: rules.collectIpDay })
        return check(checks)
      }
    })
  })
)
