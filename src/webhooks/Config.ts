import { Config, ConfigError, Context, Effect, Either, Layer } from "effect"
import { parseRateLimitRule, type RateLimitRule } from "../platform/Config.js"

/** Webhook delivery and alert settings, read once from the environment (docs/webhooks.md). */
export interface WebhooksConfigShape {
  /** The waits between attempts, in seconds: N waits = N + 1 attempts, then the delivery is failed. */
  readonly retrySchedule: ReadonlyArray<number>
  /** Allow loopback, private and link-local targets and plain http (tests, private deployments). */
  readonly allowPrivate: boolean
  /** An attempt without a 2xx within this many milliseconds has failed. */
  readonly timeoutMs: number
  /** At most this many sends in flight per process. */
  readonly concurrency: number
  /** At most this many sends of one account in flight, across every server process. */
  readonly accountConcurrency: number
  /** At most this many webhook endpoints per account. */
  readonly maxEndpoints: number
  /** Test pings (POST .../test) per account: at most `limit` in any `windowSeconds`. */
  readonly testLimit: RateLimitRule
  /** How often the sender looks for due deliveries (a delivery made by this process wakes it at once). */
  readonly pollMs: number
  /** An endpoint failing every attempt for this long is disabled. */
  readonly disableAfterMs: number
  /** crawler.spoofed_surge: spoofed hits of one bot in the last hour above which it fires. */
  readonly spoofedMin: number
  /** ingestion.stalled: hours without a delivery on a channel that delivered in the last 7 days. */
  readonly stallHours: number
  /** How often the background alert checks (ingestion.stalled) run. */
  readonly checkEveryMs: number
}

export class WebhooksConfig extends Context.Tag("WebhooksConfig")<WebhooksConfig, WebhooksConfigShape>() {}

export const DEFAULT_RETRY_SCHEDULE = "5,300,1800,7200,18000,36000,36000"

export const WEBHOOKS_DEFAULTS: WebhooksConfigShape = {
  retrySchedule: DEFAULT_RETRY_SCHEDULE.split(",").map(Number),
  allowPrivate: false,
  timeoutMs: 10_000,
  concurrency: 8,
  accountConcurrency: 2,
  maxEndpoints: 20,
  testLimit: { limit: 10, windowSeconds: 60 },
  pollMs: 1_000,
  disableAfterMs: 5 * 24 * 3_600_000,
  spoofedMin: 100,
  stallHours: 6,
  checkEveryMs: 5 * 60_000
}

/** "5,300,1800" -> [5, 300, 1800]; undefined when any wait is not a number of seconds >= 0. */
export const parseRetrySchedule = (text: string): ReadonlyArray<number> | undefined => {
  const trimmed = text.trim()
  if (trimmed === "") return []
  const waits = trimmed.split(",").map((part) => part.trim())
  if (waits.some((wait) => !/^\d+(\.\d+)?$/.test(wait))) return undefined
  return waits.map(Number)
}

export const WebhooksConfigLive = Layer.effect(
  WebhooksConfig,
  Effect.gen(function*() {
    const env = yield* Config.all({
      retrySchedule: Config.string("WEBHOOK_RETRY_SCHEDULE").pipe(
        Config.withDefault(DEFAULT_RETRY_SCHEDULE),
        Config.mapOrFail((text) => {
          const schedule = parseRetrySchedule(text)
          return schedule === undefined
            ? Either.left(ConfigError.InvalidData(["WEBHOOK_RETRY_SCHEDULE"], `must be seconds separated by commas, got ${JSON.stringify(text)}`))
            : Either.right(schedule)
        })
      ),
      allowPrivate: Config.string("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault("")),
      concurrency: Config.integer("WEBHOOK_CONCURRENCY").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.concurrency)),
      accountConcurrency: Config.integer("WEBHOOK_ACCOUNT_CONCURRENCY").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.accountConcurrency)),
      maxEndpoints: Config.integer("WEBHOOK_MAX_ENDPOINTS").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.maxEndpoints)),
      testLimit: Config.string("WEBHOOK_TEST_LIMIT").pipe(
        Config.withDefault(`${WEBHOOKS_DEFAULTS.testLimit.limit}/${WEBHOOKS_DEFAULTS.testLimit.windowSeconds}`),
        Config.mapOrFail((text) => {
          const rule = parseRateLimitRule(text)
          return rule === undefined || rule.limit <= 0
            ? Either.left(ConfigError.InvalidData(["WEBHOOK_TEST_LIMIT"], `must be <count>/<seconds>, got ${JSON.stringify(text)}`))
            : Either.right(rule)
        })
      ),
      pollMs: Config.integer("WEBHOOK_POLL_MS").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.pollMs)),
      spoofedMin: Config.integer("ALERT_SPOOFED_MIN").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.spoofedMin)),
      stallHours: Config.number("ALERT_STALL_HOURS").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.stallHours)),
      checkSeconds: Config.number("ALERT_CHECK_SECONDS").pipe(Config.withDefault(WEBHOOKS_DEFAULTS.checkEveryMs / 1000))
    }).pipe(Effect.orDie)
    return {
      ...WEBHOOKS_DEFAULTS,
      retrySchedule: env.retrySchedule,
      allowPrivate: ["1", "true", "yes"].includes(env.allowPrivate.trim().toLowerCase()),
      concurrency: Math.max(1, env.concurrency),
      // One account never takes every slot of a process: the others keep at least one.
      accountConcurrency: Math.max(1, Math.min(env.accountConcurrency, Math.max(1, env.concurrency - 1))),
      maxEndpoints: Math.max(1, env.maxEndpoints),
      testLimit: env.testLimit,
      pollMs: Math.max(50, env.pollMs),
      spoofedMin: Math.max(1, env.spoofedMin),
      stallHours: Math.max(0, env.stallHours),
      checkEveryMs: Math.max(1_000, env.checkSeconds * 1000)
    }
  })
)

/** For tests: the defaults and any overrides. */
export const webhooksConfigTest = (overrides: Partial<WebhooksConfigShape> = {}) =>
  Layer.succeed(WebhooksConfig, { ...WEBHOOKS_DEFAULTS, ...overrides })
