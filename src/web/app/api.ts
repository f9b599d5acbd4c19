// Type-only imports: erased from the browser bundle, so the page reads the server's own shapes.
import type { ApiKeyRecord, MeBody } from "../../accounts/Api.js"
import type {
  AgentPagesResponse as AgentPagesResponseSchema,
  AgentsResponse as AgentsResponseSchema,
  CrawledPage as CrawledPageSchema,
  PageBotsResponse as PageBotsResponseSchema
} from "../../agents/Api.js"
import type { Brand as BrandSchema, BrandList } from "../../brands/Api.js"
import type { ScanStatusResponse as ScanStatusResponseSchema } from "../../observations/Api.js"
import type { CatalogResponse as CatalogResponseSchema } from "../../verification/Api.js"
import type {
  IndustryMetricsResponse as IndustryMetricsResponseSchema,
  IndustryRankingRow,
  ModelResponse as ModelResponseSchema,
  PromptsResponse as PromptsResponseSchema,
  SnapshotsResponse as SnapshotsResponseSchema
} from "../../visibility/Api.js"
import type { IngestionHealth } from "../../webhooks/Api.js"
/**
 * Calls of the web application: the cookie-authenticated dashboard surface only (/api/v1).
 * The browser never holds an API key; the session cookie is HttpOnly and SameSite=Lax.
 */

export interface ApiError {
  readonly status: number
  readonly body: { readonly error?: string; readonly hint?: string; readonly [key: string]: unknown }
}

export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

/** An error answer's body: an object whose `error` and `hint`, when present, are sentences. */
const isErrorBody = (value: unknown): value is ApiError["body"] =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  (!("error" in value) || typeof value.error === "string") &&
  (!("hint" in value) || typeof value.hint === "string")

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
  // allow-cast: the answer of our own server, whose shape is the API schema the caller's type is derived
  // from (api.ts's types are `typeof XResponse.Encoded`); decoding it here would bundle effect into the page.
  if (response.ok) return { ok: true, value: parsed as A }
  return { ok: false, error: { status: response.status, body: isErrorBody(parsed) ? parsed : {} } }
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

// Response shapes drawn by the pages: the wire side (`Encoded`) of the server's own API schemas, by
// type-only imports (erased from the browser bundle), so a field the server adds or renames reaches
// the page's types instead of drifting from a hand copy.

/** GET /api/v1/me. */
export type Me = typeof MeBody.Encoded

/** One of GET /api/v1/me/api-keys. */
export type ApiKey = typeof ApiKeyRecord.Encoded

/** One of GET /api/v1/me/brands. */
export type Brand = typeof BrandSchema.Encoded
export type BrandListResponse = typeof BrandList.Encoded

/** GET /api/v1/me/brands/{slug}/prompts (spec 2.4). */
export type PromptsResponse = typeof PromptsResponseSchema.Encoded

/** GET /api/v1/me/brands/{slug}/ingestion. */
export type IngestionHealthResponse = typeof IngestionHealth.Encoded

export type CrawledPage = typeof CrawledPageSchema.Encoded
export type AgentsResponse = typeof AgentsResponseSchema.Encoded
export type AgentPagesResponse = typeof AgentPagesResponseSchema.Encoded
export type SnapshotsResponse = typeof SnapshotsResponseSchema.Encoded
export type RankingRow = typeof IndustryRankingRow.Encoded
export type IndustryMetricsResponse = typeof IndustryMetricsResponseSchema.Encoded
export type ModelResponse = typeof ModelResponseSchema.Encoded

/** GET /api/v1/me/brands/{slug}/scans: the brand's last scan per answer engine. */
export type ScanStatusResponse = typeof ScanStatusResponseSchema.Encoded

/** GET /api/v1/catalog: every agent of the catalog with its verification methods. */
export type CatalogResponse = typeof CatalogResponseSchema.Encoded

/** GET /api/v1/me/brands/{slug}/agents/pages/bots: the bots of one crawled page, by verdict. */
export type PageBotsResponse = typeof PageBotsResponseSchema.Encoded
export type CatalogAgent = CatalogResponse["agents"][number]
