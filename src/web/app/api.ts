// A type-only import: erased from the browser bundle, so the page reads the server's own shape.
import type { ScanStatus } from "../../observations/Observations.js"
import type { CatalogResponse as CatalogResponseSchema } from "../../verification/Api.js"
import type { PageBotsResponse as PageBotsResponseSchema } from "../../agents/Api.js"
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

/** The API's own message as the end of a sentence: capitalised, with a full stop. */
const sentence = (text: string) => {
  const trimmed = text.trim()
  if (trimmed === "") return ""
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1)
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

/** What went wrong, by status, in words; the API's message follows where it adds something. */
const STATUS_SENTENCES: Readonly<Record<number, string>> = {
  400: "Please check the form:",
  401: "Your session has ended: please sign in again.",
  403: "Your plan or account does not allow this.",
  404: "This was not found in your account.",
  409: "This already exists.",
  413: "This is too large to send at once.",
  429: "Too many requests or the monthly allowance is used up; try again later.",
  503: "The service is busy or a dependency is down; try again in a minute."
}

/**
 * A readable sentence for an error answer: what happened, then the API's message; never a bare
 * status code. A plan limit is said once (the hint already names the plan and its cap).
 */
export const describeError = (error: ApiError): string => {
  const body = error.body
  if (error.status === 402 && body.error === "plan_limit_reached") {
    const plan = String(body["plan"])
    const hint = body.hint ?? ""
    // The hint opens with "The <plan> plan allows <N things>. <what to do>": keep its words once.
    const opening = new RegExp(`^The ${plan} plan allows ([^.]*)\\.\\s*`).exec(hint)
    const allows = opening ? opening[1] : String(body["limit"])
    const rest = opening ? hint.slice(opening[0].length) : hint
    return `Plan limit reached: the ${plan} plan allows ${allows} (${String(body["count"])} in use). ${rest}`.trim()
  }
  if (error.status === 501) return "This view is not available on this server yet."
  if (error.status === 0) return "The server cannot be reached: check your connection and try again."
  const message = typeof body.error === "string" ? body.error : ""
  const lead = STATUS_SENTENCES[error.status] ?? (error.status >= 500 ? "Something went wrong on our side; try again in a minute." : "The request was refused.")
  if (error.status === 401) return lead
  if (error.status === 404 && message === "brand not found") return "This brand is not in your account: pick one on the Brands page."
  return message === "" || message === "not implemented" ? lead.replace(/:$/, ".") : `${lead} ${sentence(message)}`
}

// Response shapes drawn by the pages (the public schemas of src/agents/Api.ts and src/visibility/Api.ts).

export interface Me {
  readonly account: { readonly id: number; readonly name: string; readonly plan: string }
  readonly user: { readonly email: string }
  readonly plan: {
    readonly id: string
    readonly max_api_keys: number
    readonly max_brands: number
    readonly max_prompts?: number
    readonly batch_ingest?: boolean
    readonly drain_ingest: boolean
    readonly monthly_events?: number
  }
  readonly usage: { readonly brands: number; readonly active_api_keys: number; readonly prompts?: number }
  /** Present for a workspace the server fills in the background (the demo of DEMO=1). */
  readonly data_fill?: { readonly status: "filling" | "ready" | "failed"; readonly days: number; readonly days_filled: number }
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
  readonly scan_frequency_hours?: number
}

/** GET /api/v1/me/brands/{slug}/prompts (spec 2.4). */
export interface PromptsResponse {
  readonly prompts: ReadonlyArray<{ readonly id: string; readonly prompt: string; readonly topic: string; readonly intent: string }>
  readonly count: number
  readonly used_total: number
  readonly limit: number
}

/** GET /api/v1/me/brands/{slug}/ingestion. */
export interface IngestionHealthResponse {
  readonly channels: ReadonlyArray<{ readonly channel: string; readonly format: string; readonly last_received_at: string | null }>
  readonly spool_pending: number
  readonly monthly_used: number
  readonly monthly_cap: number
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

/** GET /api/v1/catalog: every agent of the catalog with its verification methods (the server's schema, wire side). */
export type CatalogResponse = typeof CatalogResponseSchema.Encoded

/** GET /api/v1/me/brands/{slug}/agents/pages/bots: the bots of one crawled page, by verdict. */
export type PageBotsResponse = typeof PageBotsResponseSchema.Encoded
export type CatalogAgent = CatalogResponse["agents"][number]
