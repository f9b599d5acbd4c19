import { Config, Context, Effect, Layer } from "effect"

/** Retention and the tag, read once from the environment (docs/agents.md). The tag's per-site rate limit is
 * RATE_LIMIT_COLLECT_SITE of the shared RateLimiter (docs/operations.md). */
export interface AgentsConfigShape {
  /** Raw crawler hits are kept this many days (docs/agents.md: default 30, configurable). */
  readonly rawRetentionDays: number
  /** Rollup rows (and AI referrals) are kept this many days (docs/agents.md: 400). */
  readonly rollupRetentionDays: number
  /** How often the retention fiber runs (it also rebuilds the 7/30/90-day spans after midnight UTC). */
  readonly sweepEveryMs: number
  /**
   * How often the rollup aggregator folds while hits keep coming (docs/performance.md); after a look that
   * found nothing queued it waits four times as long. Reads are exact whatever it is: it bounds how many
   * queued hits a read adds to the rollups, which is what a read's cost grows with (50 against 200 ms took
   * PostgreSQL from 67% to 57% of a core at 300 requests a second of the crawler-heavy mix).
   */
  readonly foldEveryMs: number
}

export class AgentsConfig extends Context.Tag("AgentsConfig")<AgentsConfig, AgentsConfigShape>() {}

export const AGENTS_DEFAULTS = {
  rawRetentionDays: 30,
  rollupRetentionDays: 400,
  sweepEveryMs: 15 * 60_000,
  foldEveryMs: 50
} as const

export const AgentsConfigLive = Layer.effect(
  AgentsConfig,
  Effect.gen(function*() {
    const env = yield* Config.all({
      rawRetentionDays: Config.integer("RAW_HIT_RETENTION_DAYS").pipe(Config.withDefault(AGENTS_DEFAULTS.rawRetentionDays)),
      rollupRetentionDays: Config.integer("ROLLUP_RETENTION_DAYS").pipe(Config.withDefault(AGENTS_DEFAULTS.rollupRetentionDays)),
      sweepMinutes: Config.number("RETENTION_SWEEP_MINUTES").pipe(Config.withDefault(AGENTS_DEFAULTS.sweepEveryMs / 60_000)),
      foldEveryMs: Config.integer("FOLD_EVERY_MS").pipe(Config.withDefault(AGENTS_DEFAULTS.foldEveryMs))
    }).pipe(Effect.orDie)
    return {
      rawRetentionDays: Math.max(1, env.rawRetentionDays),
      // The rollup must outlive the longest range (90 days) and the raw hits.
      rollupRetentionDays: Math.max(90, env.rawRetentionDays, env.rollupRetentionDays),
      sweepEveryMs: Math.max(1_000, env.sweepMinutes * 60_000),
      foldEveryMs: Math.min(60_000, Math.max(10, env.foldEveryMs))
    }
  })
)

/** For tests: the defaults and any overrides. */
export const agentsConfigTest = (overrides: Partial<AgentsConfigShape> = {}) =>
  Layer.succeed(AgentsConfig, { ...AGENTS_DEFAULTS, ...overrides })
