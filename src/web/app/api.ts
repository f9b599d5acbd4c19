// A type-only import: erased from the browser bundle, so the page reads the server's own shape.
import type { ScanStatus } from "../../visibility/Observations.js"
/**
 * Calls of the web application: the cookie-authenticated dashboard surface only (/api/v1).
 * The browser never holds an API key; the session cookie is HttpOnly and SameSite=Lax.
 */

export interface ApiError {
  readonly status: number
  readonly body: { readonly error?: string; readonly hint?: string; readonly [key: string]: unknown }
}

export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

export const call = async <A>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<Result<A>> => {
  let response: Response
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body)
    })
  } catch {
    return { ok: false, error: { status: 0, body: { error: "the server cannot be reached" } } }
  }
  const text = await response.text()
  let parsed: unknown = null
  try {
    parsed = text === "" ? null : JSON.parse(text)
  } catch {
    parsed = { error: text }
  }
  if (response.ok) return { ok: true, value: parsed as A }
  return { ok: false, error: { status: response.status, body: (parsed ?? {}) as ApiError["body"] } }
}

export const get = <A>(path: string) => call<A>("GET", path)
export const post = <A>(path: string, body?: unknown) => call<A>("POST", path, body ?? {})
export const put = <A>(path: string, body: unknown) => call<A>("PUT", path, body)

/** A readable sentence for an error answer, with the hint of a 402. */
export const describeError = (error: ApiError): string => {
  const body = error.body
  if (error.status === 402 && body.error === "plan_limit_reached") {
    return `Plan limit reached: the ${String(body["plan"])} plan allows ${String(body["limit"])} (${String(body["count"])} in use). ${
      body.hint ?? ""
    }`.trim()
  }
  if (error.status === 501) return "Not available yet: this server does not compute this view yet (501 not implemented)."
  if (error.status === 0) return "The server cannot be reached."
  return `${body.error ?? "request failed"} (HTTP ${error.status})`
}

// Response shapes drawn by the pages (the public schemas of src/agents/Api.ts and src/visibility/Api.ts).

export interface Me {
  readonly account: { readonly id: number; readonly name: string; readonly plan: string }
  readonly user: { readonly email: string }
  readonly plan: { readonly id: string; readonly max_api_keys: number; readonly max_brands: number; readonly drain_ingest: boolean }
  readonly usage: { readonly brands: number; readonly active_api_keys: number }
}

export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

export interface Brand {
  readonly id: number
  readonly brand_slug: string
  readonly brand_name: string
  readonly domain: string
  readonly vertical: string
  readonly site_id: string
  readonly added_at: string
}

export interface CrawledPage {
  readonly path: string
  readonly hits: number
  readonly errors: number
  readonly uniques: number
  readonly bots: ReadonlyArray<string>
  readonly last_seen: string
}

export interface AgentsResponse {
  readonly range: string
  readonly kpis: { readonly hits: number; readonly pages: number; readonly bots: number; readonly error_rate: number }
  readonly trend: ReadonlyArray<{ readonly date: string; readonly hits: number; readonly by_kind: Record<string, number> }>
  readonly breakdowns: {
    readonly by_bot: ReadonlyArray<{ readonly bot: string; readonly vendor: string; readonly kind: string; readonly hits: number }>
    readonly by_vendor: ReadonlyArray<{ readonly vendor: string; readonly hits: number }>
    readonly by_kind: ReadonlyArray<{ readonly kind: string; readonly hits: number }>
    readonly by_status: ReadonlyArray<{ readonly status: number | null; readonly hits: number }>
    readonly by_verification?: ReadonlyArray<{ readonly verification: string; readonly hits: number }>
  }
  readonly top_pages: ReadonlyArray<CrawledPage>
  readonly ranges_snapshot?: string
  readonly tag: { readonly site_id: string; readonly snippet: string }
  readonly retention_limited: boolean
  readonly coverage_from: string
}

export interface AgentPagesResponse {
  readonly pages: ReadonlyArray<CrawledPage>
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly retention_limited: boolean
  readonly coverage_from: string
}

export interface SnapshotsResponse {
  readonly snapshots: ReadonlyArray<{
    readonly date: string
    readonly citation_rate: number
    readonly brand_mentions: number
    readonly total_responses: number
    readonly per_engine: Record<string, number>
    readonly sentiment_avg: number
    /** 95% interval of brand_mentions / total_responses (docs/visibility.md, "Intervals"). */
    readonly mention_rate_ci95?: readonly [number, number] | null
  }>
  readonly count: number
}

export interface RankingRow {
  readonly name: string
  readonly mentions: number
  readonly share: number
  readonly delta: number
  readonly is_own: boolean
  readonly share_ci95?: readonly [number, number] | null
  readonly delta_ci95?: readonly [number, number] | null
  readonly significant?: boolean
}

export interface IndustryMetricsResponse {
  readonly ranking: ReadonlyArray<RankingRow>
  readonly own: { readonly total_mentions: number; readonly total_responses: number; readonly avg_position: number }
}

export interface ModelResponse {
  readonly engines: ReadonlyArray<{
    readonly engine: string
    readonly score: number
    readonly delta: number
    readonly n?: number
    readonly score_ci95?: readonly [number, number] | null
    readonly delta_ci95?: readonly [number, number] | null
    readonly significant?: boolean
  }>
}

/** GET /api/v1/me/brands/{slug}/scans: the brand's last scan per answer engine. */
export type ScanStatusResponse = Omit<ScanStatus, "brand_slug">
