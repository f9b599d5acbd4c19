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
   * How often the rollup aggregator looks for queued hits to fold (docs/performance.md). Reads are exact
   * whatever it is: it only bounds how many queued hits a read adds to the rollups.
   */
  readonly foldEveryMs: number
}

export class AgentsConfig extends Context.Tag("AgentsConfig")<AgentsConfig, AgentsConfigShape>() {}

export const AGENTS_DEFAULTS = {
  rawRetentionDays: 30,
  rollupRetentionDays: 400,
  sweepEveryMs: 15 * 60_000,
  foldEveryMs: 200
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
