import { Config, ConfigError, Context, Effect, Either, Layer } from "effect"

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
