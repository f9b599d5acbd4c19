import { Config, ConfigError, Context, Either, Layer, Option, Redacted } from "effect"

/** Settings read once from the environment; every service asks this tag, never process.env. */
export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** PostgreSQL server URL; None means the embedded PGlite database under dataDir. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number
  /** How long a dashboard session lives. */
  readonly sessionDays: number
  /** How often pending API-key last-used times are written back. */
  readonly lastUsedFlushSeconds: number
  /** Operations (docs/operations.md): rate limits, Redis, proxies, shutdown, logs, readiness. */
  readonly rateLimits: RateLimitRules
  /** Redis shared by every server process for the rate limits; None: each process counts alone. */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  /** Prefix of every Redis key this service writes. */
  readonly redisPrefix: string
  /** Take the client IP from the last X-Forwarded-For entry (behind one trusted proxy). */
  readonly trustProxy: boolean
  /**
   * The server's public base URL (PUBLIC_URL, e.g. https://api.example.com, without a trailing slash):
   * the tag snippet's address and, when https, Secure session cookies. None = from the request.
   */
  readonly publicUrl: Option.Option<string>
  /** SIGTERM: how long in-flight requests and the spool flush may take before the process exits. */
  readonly shutdownGraceMs: number
  /** One JSON line per request on stdout. */
  readonly logRequests: boolean
  /** /readyz answers 503 when more spool files than this wait. */
  readonly readySpoolMax: number
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken: Option.Option<Redacted.Redacted>
  /** Reads in flight at once in this process per API key and per dashboard session (0: no bound). */
  readonly concurrentReads: ConcurrentReads
  /** The longest a statement may run on the PostgreSQL server before it is cancelled, in ms (0: no limit). */
  readonly statementTimeoutMs: number
  /** In-process caches, each bounded by an approximate byte budget (docs/operations.md). */
  readonly cacheBytes: CacheBudgets
}

/** Bounds on reads in flight at once (docs/security.md, "Bounds on a request's cost"). */
export interface ConcurrentReads {
  /** GET and HEAD of /api/public/v1 and POST /mcp, per API key. */
  readonly perKey: number
  /** GET and HEAD of /api/v1 (the dashboard and its twins of the public reads), per session. */
  readonly perSession: number
}

export const CONCURRENT_READS_DEFAULTS: ConcurrentReads = { perKey: 4, perSession: 8 }

export const STATEMENT_TIMEOUT_DEFAULT_MS = 30_000

/** Approximate bytes each in-process cache may hold; past it, the cache starts over empty. */
export interface CacheBudgets {
  /** Each account's brands (BRAND_CACHE_BYTES). */
  readonly brands: number
  /** API keys by hash, unknown ones included (API_KEY_CACHE_BYTES). */
  readonly apiKeys: number
}

export const CACHE_BYTES_DEFAULTS: CacheBudgets = { brands: 64 * 1024 * 1024, apiKeys: 16 * 1024 * 1024 }

/** A token bucket: `limit` requests, refilled evenly over `windowSeconds`. limit 0 = no limit. */
export interface RateLimitRule {
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateLimitRules {
  /** Public surface (/api/public/v1, /mcp) per API key. */
  readonly apiKey: RateLimitRule
  /** Public surface per client IP. */
  readonly apiIp: RateLimitRule
  /** The JavaScript tag's collect endpoint per site. */
  readonly collectSite: RateLimitRule
  /** Login and signup per email address. */
  readonly authEmail: RateLimitRule
  /** Login and signup per client IP. */
  readonly authIp: RateLimitRule
  /** The tag's own daily allowance per site (absent: no limit); tag hits never spend the server-log cap. */
  readonly collectSiteDay?: RateLimitRule
  /** The tag's own daily allowance per client IP (absent: no limit). */
  readonly collectIpDay?: RateLimitRule
}

/** "600/60" = 600 requests per 60 seconds; "0" or "off" = no limit. */
export const parseRateLimitRule = (text: string): RateLimitRule | undefined => {
  const value = text.trim().toLowerCase()
  if (value === "0" || value === "off" || value === "") return { limit: 0, windowSeconds: 1 }
  const match = /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*s?$/.exec(value)
  if (match === null) return undefined
  const limit = Number(match[1])
  const windowSeconds = Number(match[2])
  return windowSeconds > 0 ? { limit, windowSeconds } : undefined
}

const rateLimitRule = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((text) => {
      const rule = parseRateLimitRule(text)
      return rule === undefined
        ? Either.left(ConfigError.InvalidData([name], `must be <requests>/<seconds> or off, got ${JSON.stringify(text)}`))
        : Either.right(rule)
    })
  )

const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(Config.map(Option.filter((value) => Redacted.value(value).trim() !== "")))

const nonNegative = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be 0 or more`, validation: (n) => n >= 0 })
  )

export const RATE_LIMIT_DEFAULTS = {
  // Generous by default: a busy integration or a test suite from one address must not trip them;
  // tighten per deployment through the environment.
  apiKey: "6000/60",
  apiIp: "12000/60",
  collectSite: "6000/60",
  authEmail: "30/300",
  authIp: "1000/300",
  // The tag is anonymous (its site id is public): a day's allowance per site and per client IP.
  collectSiteDay: "50000/86400",
  collectIpDay: "2000/86400"
} as const

const OFF: RateLimitRule = { limit: 0, windowSeconds: 1 }

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {}

export const appConfigFromEnv: Config.Config<AppConfigShape> = Config.all({
  port: Config.integer("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")).pipe(
    // An empty DATABASE_URL means "not set": the embedded database.
    Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  maxBodyBytes: Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(32 * 1024 * 1024)),
  sessionDays: Config.integer("SESSION_DAYS").pipe(Config.withDefault(30)),
  lastUsedFlushSeconds: Config.integer("LAST_USED_FLUSH_SECONDS").pipe(Config.withDefault(60)),
  rateLimits: Config.all({
    apiKey: rateLimitRule("RATE_LIMIT_API_KEY", RATE_LIMIT_DEFAULTS.apiKey),
    apiIp: rateLimitRule("RATE_LIMIT_API_IP", RATE_LIMIT_DEFAULTS.apiIp),
    collectSite: rateLimitRule("RATE_LIMIT_COLLECT_SITE", RATE_LIMIT_DEFAULTS.collectSite),
    authEmail: rateLimitRule("RATE_LIMIT_AUTH_EMAIL", RATE_LIMIT_DEFAULTS.authEmail),
    authIp: rateLimitRule("RATE_LIMIT_AUTH_IP", RATE_LIMIT_DEFAULTS.authIp),
    collectSiteDay: rateLimitRule("RATE_LIMIT_COLLECT_SITE_DAY", RATE_LIMIT_DEFAULTS.collectSiteDay),
    collectIpDay: rateLimitRule("RATE_LIMIT_COLLECT_IP_DAY", RATE_LIMIT_DEFAULTS.collectIpDay)
  }),
  redisUrl: optionalSecret("REDIS_URL"),
  redisPrefix: Config.string("REDIS_PREFIX").pipe(Config.withDefault("aiv:")),
  trustProxy: Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
  publicUrl: Config.option(Config.string("PUBLIC_URL")).pipe(
    Config.map((url) => Option.map(Option.filter(url, (u) => u.trim() !== ""), (u) => u.trim().replace(/\/+$/, "")))
  ),
  shutdownGraceMs: Config.integer("SHUTDOWN_GRACE_MS").pipe(Config.withDefault(15_000)),
  logRequests: Config.boolean("LOG_REQUESTS").pipe(Config.withDefault(true)),
  readySpoolMax: Config.integer("READY_SPOOL_MAX").pipe(Config.withDefault(10_000)),
  metricsToken: optionalSecret("METRICS_TOKEN"),
  concurrentReads: Config.all({
    perKey: nonNegative("CONCURRENT_READS_PER_KEY", CONCURRENT_READS_DEFAULTS.perKey),
    perSession: nonNegative("CONCURRENT_READS_PER_SESSION", CONCURRENT_READS_DEFAULTS.perSession)
  }),
  statementTimeoutMs: nonNegative("STATEMENT_TIMEOUT_MS", STATEMENT_TIMEOUT_DEFAULT_MS),
  cacheBytes: Config.all({
    brands: Config.integer("BRAND_CACHE_BYTES").pipe(Config.withDefault(CACHE_BYTES_DEFAULTS.brands)),
    apiKeys: Config.integer("API_KEY_CACHE_BYTES").pipe(Config.withDefault(CACHE_BYTES_DEFAULTS.apiKeys))
  })
})

export const AppConfigLive = Layer.effect(AppConfig, appConfigFromEnv)

export const appConfigTest = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.succeed(AppConfig, {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: Option.none(),
    dataDir: "memory://",
    maxBodyBytes: 32 * 1024 * 1024,
    sessionDays: 30,
    lastUsedFlushSeconds: 60,
    // In process, every request comes from one "client": limits are off unless a test sets them.
    rateLimits: { apiKey: OFF, apiIp: OFF, collectSite: OFF, authEmail: OFF, authIp: OFF },
    redisUrl: Option.none(),
    redisPrefix: "aiv-test:",
    trustProxy: false,
    publicUrl: Option.none(),
    shutdownGraceMs: 5_000,
    logRequests: false,
    readySpoolMax: 10_000,
    metricsToken: Option.none(),
    // Off in process (tests fire many reads at once with one key) unless a test sets them.
    concurrentReads: { perKey: 0, perSession: 0 },
    statementTimeoutMs: 0,
    cacheBytes: CACHE_BYTES_DEFAULTS,
    ...overrides
  })

const ruleText = (rule: RateLimitRule) => (rule.limit <= 0 ? "off" : `${rule.limit}/${rule.windowSeconds}`)

/**
 * The effective configuration for the start-up log line: secrets (database and Redis URLs,
 * the metrics token) never appear, only whether they are set.
 */
export const configSummary = (config: AppConfigShape): Record<string, unknown> => ({
  port: config.port,
  host: config.host,
  database: Option.isSome(config.databaseUrl) ? "postgresql (DATABASE_URL set, redacted)" : `embedded (${config.dataDir})`,
  max_body_bytes: config.maxBodyBytes,
  session_days: config.sessionDays,
  last_used_flush_seconds: config.lastUsedFlushSeconds,
  rate_limits: Object.fromEntries(Object.entries(config.rateLimits).flatMap(([name, rule]) => rule === undefined ? [] : [[name, ruleText(rule)]])),
  rate_limit_store: Option.isSome(config.redisUrl) ? "redis (REDIS_URL set, redacted)" : "in process",
  redis_prefix: config.redisPrefix,
  trust_proxy: config.trustProxy,
  shutdown_grace_ms: config.shutdownGraceMs,
  log_requests: config.logRequests,
  ready_spool_max: config.readySpoolMax,
  metrics_token: Option.isSome(config.metricsToken) ? "set (redacted)" : "unset",
  concurrent_reads: { per_key: config.concurrentReads.perKey, per_session: config.concurrentReads.perSession },
  statement_timeout_ms: config.statementTimeoutMs,
  brand_cache_bytes: config.cacheBytes.brands,
  api_key_cache_bytes: config.cacheBytes.apiKeys
})
