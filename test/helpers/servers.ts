import { browserLike } from "./browser-like.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { PasswordHasherCheap } from "../../src/accounts/Passwords.js"
import { makeServices, RepositoriesLive } from "../../src/app/Layers.js"
import { appConfigTest, type RateLimitRule } from "../../src/platform/Config.js"
import { sqlServer } from "../../src/platform/Sql.js"
import { type RunningServer, startServer } from "../hardening/server.js"
import type { TestApp, TestAppOptions } from "./app.js"

/**
 * The two-process test mode: with TEST_SERVERS=2 and TEST_DATABASE_URL, a "postgres" test
 * app is two real server processes on one fresh schema, and `fetch` alternates between them per
 * request, so a key created through one is used on the other, a revoke through one is checked by the
 * other, caps and (with Redis) rate limits are counted by both. `run` stays in process, on the same
 * database. docs/architecture.md, "Two-process test mode", lists what falls back to the in-process app.
 */
export const twoServerMode = (): boolean => process.env.TEST_SERVERS === "2" && Boolean(process.env.TEST_DATABASE_URL)

/** Variables the server reads (src/platform/Config.ts, ingestion, agents, visibility, scanner, demo). */
const APP_VARIABLES = [
  "PORT", "HOST", "DATABASE_URL", "DATA_DIR", "MAX_BODY_BYTES", "SESSION_DAYS", "LAST_USED_FLUSH_SECONDS",
  "RATE_LIMIT_API_KEY", "RATE_LIMIT_API_IP", "RATE_LIMIT_COLLECT_SITE", "RATE_LIMIT_AUTH_EMAIL", "RATE_LIMIT_AUTH_IP",
  "RATE_LIMIT_COLLECT_SITE_DAY", "RATE_LIMIT_COLLECT_IP_DAY",
  "REDIS_URL", "REDIS_PREFIX", "TRUST_PROXY", "SHUTDOWN_GRACE_MS", "LOG_REQUESTS", "READY_SPOOL_MAX", "METRICS_TOKEN",
  "INGEST_MAX_BODY_BYTES", "INGEST_MAX_INFLATED_BYTES", "SPOOL_DIR", "SPOOL_RETRY_MIN_MS", "SPOOL_RETRY_MAX_MS", "SPOOL_POLL_MS",
  "RAW_HIT_RETENTION_DAYS", "ROLLUP_RETENTION_DAYS", "RETENTION_SWEEP_MINUTES", "FOLD_EVERY_MS", "PUBLIC_URL", "FANOUT_GROUP_CAP",
  "SCANNER_ENABLED", "SCANNER_INTERVAL_SECONDS", "SCANNER_CONCURRENCY", "SCANNER_BRANDS_PER_TICK", "ENGINE_TIMEOUT_SECONDS",
  "ENGINE_RETRIES", "ENGINE_RETRY_BASE_MS", "DEMO", "DEMO_DAYS", "TEST_FIXED_NOW",
  "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_ALLOW_PRIVATE", "WEBHOOK_CONCURRENCY", "WEBHOOK_POLL_MS", "WEBHOOK_ACCOUNT_CONCURRENCY",
  "WEBHOOK_MAX_ENDPOINTS", "WEBHOOK_TEST_LIMIT", "ALERT_SPOOFED_MIN",
  "ALERT_STALL_HOURS", "ALERT_CHECK_SECONDS", "CONCURRENT_READS_PER_KEY", "CONCURRENT_READS_PER_SESSION", "STATEMENT_TIMEOUT_MS",
  "VERIFY_DNS_WAIT_MS"
]

/** The test process's environment without anything that configures the app (ENGINE_* included). */
const baseEnv = (): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of Object.keys(env)) {
    if (APP_VARIABLES.includes(name) || name.startsWith("ENGINE_")) delete env[name]
  }
  return env
}

const ruleText = (rule: RateLimitRule) => (rule.limit <= 0 ? "off" : `${rule.limit}/${rule.windowSeconds}`)

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`

export type ServerPlan =
  | { readonly _tag: "servers"; readonly env: Record<string, string>; readonly entry: string }
  | { readonly _tag: "inProcess"; readonly why: string }

const inProcess = (why: string): ServerPlan => ({ _tag: "inProcess", why })

/**
 * The server environment equivalent to makeTestApp's options (appConfigTest, ingestionConfigTest,
 * agentsConfigTest, visibilityConfigTest and the overrides), or why this app stays in process.
 */
export const planServers = (url: string, options: TestAppOptions): ServerPlan => {
  // Options that cannot cross a process boundary.
  if (options.wrapSql !== undefined) return inProcess("wrapSql: the SqlClient wrapper (e.g. an injected outage) lives in the test process")
  if (options.inProcess !== undefined) return inProcess(options.inProcess)
  const known = new Set(["serverUrl", "wrapSql", "inProcess", "ingest", "visibility", "agents", "now", "config", "webhooks"])
  const unknown = Object.keys(options).filter((key) => !known.has(key))
  if (unknown.length > 0) return inProcess(`option(s) without an environment equivalent: ${unknown.join(", ")}`)

  const config = options.config ?? {}
  for (const key of ["port", "host", "dataDir", "databaseUrl"] as const) {
    if (config[key] !== undefined) return inProcess(`config.${key}: set by the two-process harness itself`)
  }
  const off: RateLimitRule = { limit: 0, windowSeconds: 1 }
  const rules = { apiKey: off, apiIp: off, collectSite: off, authEmail: off, authIp: off, ...config.rateLimits }
  const limited = Object.values(rules).some((rule) => rule !== undefined && rule.limit > 0)
  const redisUrl = config.redisUrl !== undefined
    ? Option.getOrUndefined(Option.map(config.redisUrl, Redacted.value))
    : process.env.REDIS_URL || undefined
  // Without a shared store each process counts alone: a limit of N would let 2N through.
  if (limited && redisUrl === undefined) return inProcess("rate limits without REDIS_URL: each process would count alone")
  if ((config.concurrentReads?.perKey ?? 0) > 0 || (config.concurrentReads?.perSession ?? 0) > 0) {
    return inProcess("concurrent-read bounds: each process counts its own reads in flight")
  }

  const env: Record<string, string> = {
    DATABASE_URL: url,
    DATA_DIR: "memory://",
    // appConfigTest's values, then the overrides.
    MAX_BODY_BYTES: String(config.maxBodyBytes ?? 32 * 1024 * 1024),
    SESSION_DAYS: String(config.sessionDays ?? 30),
    LAST_USED_FLUSH_SECONDS: String(config.lastUsedFlushSeconds ?? 60),
    RATE_LIMIT_API_KEY: ruleText(rules.apiKey),
    RATE_LIMIT_API_IP: ruleText(rules.apiIp),
    RATE_LIMIT_COLLECT_SITE: ruleText(rules.collectSite),
    RATE_LIMIT_AUTH_EMAIL: ruleText(rules.authEmail),
    RATE_LIMIT_AUTH_IP: ruleText(rules.authIp),
    // The tag's daily allowances: absent from a test's rules means off, as in process.
    RATE_LIMIT_COLLECT_SITE_DAY: ruleText(rules.collectSiteDay ?? off),
    RATE_LIMIT_COLLECT_IP_DAY: ruleText(rules.collectIpDay ?? off),
    REDIS_URL: redisUrl ?? "",
    // Each app its own buckets, even on a shared Redis.
    REDIS_PREFIX: config.redisPrefix ?? `aiv-test-${unique()}:`,
    TRUST_PROXY: String(config.trustProxy ?? false),
    SHUTDOWN_GRACE_MS: String(config.shutdownGraceMs ?? 5_000),
    LOG_REQUESTS: String(config.logRequests ?? false),
    READY_SPOOL_MAX: String(config.readySpoolMax ?? 10_000),
    METRICS_TOKEN: Option.getOrElse(Option.map(config.metricsToken ?? Option.none(), Redacted.value), () => ""),
    // appConfigTest's: off unless the test sets them.
    CONCURRENT_READS_PER_KEY: String(config.concurrentReads?.perKey ?? 0),
    CONCURRENT_READS_PER_SESSION: String(config.concurrentReads?.perSession ?? 0),
    STATEMENT_TIMEOUT_MS: String(config.statementTimeoutMs ?? 0),
    // Not part of the in-process app: no scanner fiber, no demo workspace.
    SCANNER_ENABLED: "false",
    // The server processes ask the machine's resolver (the in-process app a fake that answers at once).
    // It answers in a few milliseconds, but a loaded machine can pass the default 20 ms wait; the hit is
    // then stored unverified until the background pass (30 s), after a test has read its verdict.
    VERIFY_DNS_WAIT_MS: "2000"
  }

  const ingest = options.ingest ?? {}
  if (ingest.maxBodyBytes !== undefined) env.INGEST_MAX_BODY_BYTES = String(ingest.maxBodyBytes)
  if (ingest.maxInflatedBytes !== undefined) env.INGEST_MAX_INFLATED_BYTES = String(ingest.maxInflatedBytes)
  // Unset, each process gets a fresh temp spool (DATA_DIR memory://), as each in-process app does.
  if (ingest.spoolDir !== undefined) env.SPOOL_DIR = ingest.spoolDir
  if (ingest.spoolRetryMinMs !== undefined) env.SPOOL_RETRY_MIN_MS = String(ingest.spoolRetryMinMs)
  if (ingest.spoolRetryMaxMs !== undefined) env.SPOOL_RETRY_MAX_MS = String(ingest.spoolRetryMaxMs)
  if (ingest.spoolPollMs !== undefined) env.SPOOL_POLL_MS = String(ingest.spoolPollMs)

  if (config.publicUrl !== undefined && Option.isSome(config.publicUrl)) {
    const publicUrl = config.publicUrl.value
    if (publicUrl !== publicUrl.trim().replace(/\/+$/, "") || publicUrl === "") {
      return inProcess("config.publicUrl not in the normalized form the server would make of PUBLIC_URL")
    }
    env.PUBLIC_URL = publicUrl
  }

  const agents = options.agents ?? {}
  // AgentsConfigLive clamps what it reads; a value it would change stays in process.
  if (agents.rawRetentionDays !== undefined) {
    if (agents.rawRetentionDays < 1) return inProcess("agents.rawRetentionDays below the server's minimum of 1")
    env.RAW_HIT_RETENTION_DAYS = String(agents.rawRetentionDays)
  }
  if (agents.rollupRetentionDays !== undefined) {
    if (agents.rollupRetentionDays < Math.max(90, agents.rawRetentionDays ?? 30)) {
      return inProcess("agents.rollupRetentionDays below the server's minimum (90 days and the raw horizon)")
    }
    env.ROLLUP_RETENTION_DAYS = String(agents.rollupRetentionDays)
  }
  if (agents.sweepEveryMs !== undefined) {
    if (agents.sweepEveryMs < 1_000) return inProcess("agents.sweepEveryMs below the server's minimum of 1 s")
    env.RETENTION_SWEEP_MINUTES = String(agents.sweepEveryMs / 60_000)
  }
  if (agents.foldEveryMs !== undefined) {
    if (agents.foldEveryMs < 10 || agents.foldEveryMs > 60_000) return inProcess("agents.foldEveryMs outside the server's 10 ms to 60 s")
    env.FOLD_EVERY_MS = String(agents.foldEveryMs)
  }

  if (options.visibility?.fanoutGroupCap !== undefined) env.FANOUT_GROUP_CAP = String(options.visibility.fanoutGroupCap)

  // Webhooks (src/webhooks/Config.ts): the test defaults (webhooksConfigTest), then the overrides.
  const webhooks = options.webhooks ?? {}
  if (webhooks.timeoutMs !== undefined || webhooks.disableAfterMs !== undefined) {
    return inProcess("webhooks.timeoutMs / disableAfterMs: no environment equivalent")
  }
  if (webhooks.retrySchedule !== undefined) env.WEBHOOK_RETRY_SCHEDULE = webhooks.retrySchedule.join(",")
  env.WEBHOOK_ALLOW_PRIVATE = webhooks.allowPrivate === true ? "1" : "0"
  if (webhooks.concurrency !== undefined) env.WEBHOOK_CONCURRENCY = String(webhooks.concurrency)
  if (webhooks.accountConcurrency !== undefined) env.WEBHOOK_ACCOUNT_CONCURRENCY = String(webhooks.accountConcurrency)
  if (webhooks.maxEndpoints !== undefined) env.WEBHOOK_MAX_ENDPOINTS = String(webhooks.maxEndpoints)
  if (webhooks.testLimit !== undefined) env.WEBHOOK_TEST_LIMIT = `${webhooks.testLimit.limit}/${webhooks.testLimit.windowSeconds}`
  if (webhooks.pollMs !== undefined) {
    if (webhooks.pollMs < 50) return inProcess("webhooks.pollMs below the server's minimum of 50 ms")
    env.WEBHOOK_POLL_MS = String(webhooks.pollMs)
  }
  if (webhooks.spoofedMin !== undefined) env.ALERT_SPOOFED_MIN = String(webhooks.spoofedMin)
  if (webhooks.stallHours !== undefined) env.ALERT_STALL_HOURS = String(webhooks.stallHours)
  if (webhooks.checkEveryMs !== undefined) {
    if (webhooks.checkEveryMs < 1_000) return inProcess("webhooks.checkEveryMs below the server's minimum of 1 s")
    env.ALERT_CHECK_SECONDS = String(webhooks.checkEveryMs / 1000)
  }

  // A fixed `now`: the same ServerLive under a Clock standing still (test/helpers/server-at.ts).
  if (options.now !== undefined) {
    env.TEST_FIXED_NOW = options.now.toISOString()
    return { _tag: "servers", env, entry: "test/helpers/server-at.ts" }
  }
  return { _tag: "servers", env, entry: "src/app/main.ts" }
}

/** startServer, again on another port when the first one was taken (or the start failed once). */
const start = async (env: Record<string, string>, entry: string): Promise<RunningServer> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(env, 60_000, { entry, baseEnv: baseEnv() })
    } catch (error) {
      if (attempt >= 3) throw error
    }
  }
}

/** Two server processes on `url` (the first applies the migrations), `run` in process on the same database. */
export const makeServerApp = async (url: string, plan: Extract<ServerPlan, { _tag: "servers" }>): Promise<TestApp> => {
  const first = await start(plan.env, plan.entry)
  let second: RunningServer
  try {
    second = await start(plan.env, plan.entry)
  } catch (error) {
    await first.stop()
    throw error
  }
  const servers = [first, second]
  const repositories = RepositoriesLive.pipe(Layer.provideMerge(sqlServer(url)))
  const runtime = ManagedRuntime.make(repositories)
  // The domain services in this process (e.g. a scan), over the same database.
  const servicesRuntime = ManagedRuntime.make(
    makeServices({ repositories: RepositoriesLive, passwords: PasswordHasherCheap }).pipe(
      Layer.provideMerge(repositories),
      Layer.provide(appConfigTest())
    )
  )
  let turn = 0
  return {
    backend: "postgres",
    fetch: (path, init) => {
      const server = servers[turn++ % servers.length]!
      const headers = new Headers(init?.headers)
      // The in-process app sees http://localhost<path>: same Host here (Origin checks, tag snippet URLs).
      if (!headers.has("host")) headers.set("host", "localhost")
      browserLike(headers)
      // The in-process handler never follows redirects: hand them back as they are.
      return fetch(`${server.base}${path}`, { redirect: "manual", ...init, headers })
    },
    run: (effect) => runtime.runPromise(effect),
    runServices: (effect) => servicesRuntime.runPromise(Effect.orDie(effect)),
    sql: sqlByHand(runtime),
    dispose: async () => {
      const codes = await Promise.all(servers.map((server) => server.stop("SIGTERM")))
      await servicesRuntime.dispose()
      await runtime.dispose()
      codes.forEach((code, i) => {
        // 0: a clean graceful shutdown; anything else is worth seeing.
        if (code !== 0) console.warn(`test server ${i + 1} exited with ${code}:\n${servers[i]!.stderr()}`)
      })
    }
  }
}

/** TestApp.sql over a runtime whose context holds the database's SqlClient (none on "fake"). */
export const sqlByHand = <R, ER>(runtime: ManagedRuntime.ManagedRuntime<R, ER>) => (text: string) =>
  runtime.runPromise(
    Effect.flatMap(Effect.serviceOption(SqlClient.SqlClient), (client) =>
      Option.isSome(client) ? Effect.asVoid(client.value.unsafe(text)) : Effect.dieMessage("no database on this back end"))
  )
