import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import { gzipSync } from "node:zlib"
import { AccountsRepo } from "../../src/accounts/Repo.js"
import { foldQueued } from "../../src/agents/Aggregator.js"
import { bearer, createBrand, createKey, type TestApp, signup } from "../helpers/app.js"

/**
 * Log-drain records in the hosting platform's (Vercel) format: build output, function
 * output (lambda/edge without proxy), and served requests (lambda, edge, static, external
 * with a proxy object; userAgent an array; statusCode -1 as the sentinel).
 */

export const UA = {
  gptbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
  claudebot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
  perplexitybot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
  chatgptUser: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
  chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  safari: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
} as const

const T0 = Date.UTC(2026, 4, 20, 8, 0, 0)
let seq = 0
const nextId = () => `${T0 + seq}${String(100000 + seq++).padStart(12, "0")}`

const base = (source: string, extra: Record<string, unknown> = {}) => ({
  id: nextId(),
  message: "",
  timestamp: T0 + seq * 1000,
  type: "stdout",
  source,
  projectId: "prj_8Kp2Qw7vXn3Lm9Rt5Yz1",
  deploymentId: "dpl_233NRGRjVZX1caZrXWtz5g1TAksD",
  host: "acme-git-main-acme.vercel.app",
  ...extra
})

export const buildRecord = () =>
  base("build", { message: "Running \"vercel build\"", buildId: "bld_cotnkcr76", path: "/" })

/** Function output of a lambda or edge function: no proxy object, not a request. */
export const functionOutput = (source: "lambda" | "edge" = "lambda") =>
  base(source, {
    message: "GET /api/users 200 in 42ms",
    entrypoint: "api/users.ts",
    requestId: "643af4e3-975a-4cc7-9e7a-1eda11539d90",
    level: "info"
  })

export interface RequestOptions {
  readonly source?: "lambda" | "edge" | "static" | "external" | "redirect" | "firewall"
  readonly ua: string
  readonly path?: string
  readonly status?: number
  readonly referer?: string
  readonly clientIp?: string | null
  readonly proxyHost?: string | null
  readonly method?: string
  readonly ts?: number
}

/** A served request: a proxy object with a method. */
export const requestRecord = (o: RequestOptions) => {
  const proxy: Record<string, unknown> = {
    timestamp: o.ts ?? T0 + seq * 1000 - 110,
    method: o.method ?? "GET",
    path: o.path ?? "/pricing?ref=nav",
    userAgent: [o.ua],
    referer: o.referer ?? "",
    region: "fra1",
    statusCode: o.status ?? 200,
    scheme: "https",
    vercelCache: o.source === "static" ? "HIT" : "MISS"
  }
  if (o.proxyHost !== null) proxy.host = o.proxyHost ?? "www.acme.com"
  if (o.clientIp !== null) proxy.clientIp = o.clientIp ?? "120.75.16.101"
  return base(o.source ?? "lambda", {
    message: "",
    path: (o.path ?? "/pricing").split("?")[0],
    statusCode: o.status ?? 200,
    requestId: `req_${seq}`,
    proxy
  })
}

/** A realistic mixed delivery: build and function output, crawler requests on every source, people. */
export const mixedDelivery = () => [
  buildRecord(),
  functionOutput("lambda"),
  requestRecord({ source: "lambda", ua: UA.gptbot, path: "/blog/ai-seo?utm=x" }),
  requestRecord({ source: "edge", ua: UA.claudebot, path: "/docs/getting-started", status: 304 }),
  requestRecord({ source: "static", ua: UA.perplexitybot, path: "/robots.txt" }),
  requestRecord({ source: "external", ua: UA.chatgptUser, path: "/pricing", status: -1, clientIp: null }),
  requestRecord({ source: "lambda", ua: UA.chrome, path: "/pricing", referer: "https://chatgpt.com/" }),
  requestRecord({ source: "static", ua: UA.safari, path: "/logo.svg" }),
  requestRecord({ source: "edge", ua: UA.googlebot, path: "/" }),
  functionOutput("edge")
]
/** Crawler hits in mixedDelivery(), and the records that are not crawler requests. */
export const MIXED = { scanned: 10, hits: 4, skipped: 6, referrals: 1 } as const

export const ndjson = (records: ReadonlyArray<unknown>) => records.map((r) => JSON.stringify(r)).join("\n") + "\n"
export const array = (records: ReadonlyArray<unknown>) => JSON.stringify(records)
export const gzip = (text: string | Uint8Array) => new Uint8Array(gzipSync(text))
export const sign = (secret: string, body: string | Uint8Array) => createHmac("sha1", secret).update(body).digest("hex")

// ---------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------

export interface Tenant {
  readonly email: string
  readonly cookie: string
  readonly key: string
  readonly siteId: string
  readonly brandSlug: string
}

let tenantSeq = 0
/** A fresh account with one brand and a key, on `plan`. */
export const tenant = async (app: TestApp, plan: "free" | "starter" | "growth" | "enterprise" = "growth"): Promise<Tenant> => {
  const n = ++tenantSeq
  const email = `ingest${n}-${Math.random().toString(36).slice(2, 7)}@example.test`
  const cookie = await signup(app, email)
  const key = (await createKey(app, cookie, "ingest")).key
  const brandSlug = `brand-${n}`
  const siteId = (await createBrand(app, cookie, brandSlug)).site_id
  if (plan !== "free") await setPlan(app, email, plan)
  return { email, cookie, key, siteId, brandSlug }
}

export const setPlan = (app: TestApp, email: string, plan: string) =>
  app.run(Effect.flatMap(AccountsRepo, (repo) => repo.setPlanByEmail(email, plan)))

/** Raw SQL on the app's database (database back ends only). */
export const query = <A = Record<string, unknown>>(app: TestApp, text: string, params: ReadonlyArray<unknown> = []) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<any>(text, params)).pipe(Effect.orDie) as Effect.Effect<ReadonlyArray<A>>)

/** The account and brand ids of the brand with this site id. */
export const brandIds = async (app: TestApp, siteId: string) =>
  (await query<{ account: number; brand: number }>(app, `select account_id::int as account, id::int as brand from brands where site_id = $1`, [siteId]))[0]!

/**
 * A brand's stored hits counted in each place that counts them: the raw hits, the rollup, the daily
 * rollup (as a read sees them: folded and queued, docs/performance.md) and its account's usage (one
 * month in the tests that use it). Equal when nothing was lost or counted twice.
 */
export const storedCounts = async (app: TestApp, brandId: number) =>
  (await query<{ hits: number; rollup: number; daily: number; used: number }>(app, `
    select (select count(*)::int from crawler_hits where brand_id = $1) as hits,
           (select sum(hits)::int from crawler_rollup_exact where brand_id = $1) as rollup,
           (select sum(hits)::int from crawler_daily_exact where brand_id = $1) as daily,
           (select sum(events)::int from monthly_usage m join brands x on x.account_id = m.account_id where x.id = $1) as used`, [brandId]))[0]!

export const drainUrl = (siteId: string, extra = "") => `/api/public/v1/agents/ingest/drain?site_id=${siteId}${extra}`

export const postDrain = (
  app: TestApp,
  key: string,
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {}
) => app.fetch(url, { method: "POST", headers: { ...bearer(key), "content-type": "application/json", ...headers }, body: body as BodyInit })

export const postBatch = (app: TestApp, key: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.fetch("/api/public/v1/agents/ingest", {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json", ...headers },
    body: typeof payload === "string" ? payload : JSON.stringify(payload)
  })

/**
 * The aggregator's fold (src/agents/Aggregator.ts) run once by the test process, through the repository
 * alone: building the app's services here would start their schedules (span roller, retention) on this
 * process's clock. 0 when another process holds the lock.
 */
export const foldNow = (app: TestApp) => app.run(foldQueued)

/**
 * Returns once every queued hit is folded into the rollups (docs/performance.md): folds here, and
 * waits while another process holds the aggregator's lock. For tests that look at the rollup tables
 * themselves (a read adds the queue on its own).
 */
export const folded = async (app: TestApp) => {
  for (let attempt = 0; attempt < 400; attempt++) {
    await foldNow(app)
    const [row] = await query<{ n: number }>(app, `select count(*)::int as n from crawler_fold_queue`)
    if (row!.n === 0) return
    await Bun.sleep(25)
  }
  throw new Error("the fold queue never emptied")
}
