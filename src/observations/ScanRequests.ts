import { Duration, Effect, Option } from "effect"
import { Accounts } from "../accounts/Accounts.js"
import { Brands } from "../brands/Brands.js"
import { monthStart } from "../platform/Days.js"
import { conflict, forbidden, ServiceUnavailable } from "../platform/HttpErrors.js"
import { now } from "../platform/Time.js"
import { engineConfigsFromEnv } from "./Engines.js"
import { ObservationsRepo } from "./Repo.js"
import { scannerSettingsFromEnv } from "./Scanner.js"

/**
 * "Scan now" of the dashboard (POST /api/v1/me/brands/{slug}/scans): the brand's next scan is moved to now,
 * and the server's scanner, which wakes every SCANNER_INTERVAL_SECONDS, claims it like any due brand (same
 * engines, samples, retries, recording, and the claim moves the next scan a plan cadence on). The rules
 * (docs/observations.md "Scan now"): paid plans only; not a brand beyond the plan's brand cap (never scanned);
 * a configured engine; the monthly token budget not spent; at most one scan an hour per brand.
 */

/** A scan on request waits at least this long after the brand's last scan. */
export const SCAN_REQUEST_COOLDOWN_MS = 60 * 60 * 1000

export interface ScanRequest {
  readonly brand_slug: string
  /** When the scan is due: now, or sooner when it already was. */
  readonly next_scan_at: string
  /** The engines the scan asks. */
  readonly engines: ReadonlyArray<string>
  readonly scanner_interval_seconds: number
}

/** Who changes a plan in this service: the operator, with the CLI (docs/decisions.md "Plans"). */
export const PLAN_CHANGE = "The account's plan is changed by the service's operator (bun run cli plan set <email> <plan>)."

export const requestScan = (accountId: number, slug: string) =>
  Effect.gen(function*() {
    const brands = yield* Brands
    const accounts = yield* Accounts
    const repo = yield* ObservationsRepo
    const brand = yield* brands.row(accountId, slug)
    const plan = yield* accounts.planOf(accountId)
    if (!plan.paid) {
      return yield* Effect.fail(forbidden(
        `scanning on request comes with the paid plans (Starter and up); the ${plan.id} plan scans every ${plan.scanHours} hours on its own. ` +
          `Answers collected elsewhere can be imported on any plan. ${PLAN_CHANGE}`
      ))
    }
    // The account's oldest brands up to the plan's cap are the ones scanned (as the scanner's claim).
    const rows = yield* brands.rows(accountId)
    if (rows.findIndex((row) => row.id === brand.id) >= plan.maxBrands) {
      return yield* Effect.fail(forbidden(
        `this brand is beyond the ${plan.id} plan's ${plan.maxBrands} brand(s), so it is not scanned: remove a brand or move to a larger plan. ${PLAN_CHANGE}`
      ))
    }
    // The server's own settings, read as its scanner reads them; a setting it cannot read counts as none.
    const engines = yield* engineConfigsFromEnv.pipe(Effect.orElseSucceed(() => []))
    if (engines.length === 0) {
      return yield* Effect.fail(new ServiceUnavailable({
        error: "no answer engine is configured on this server: its operator sets ENGINE_<SLUG>_URL, _MODEL and _API_KEY (README, \"Answer engines\"); until then, import answers collected elsewhere"
      }))
    }
    const settings = yield* scannerSettingsFromEnv.pipe(Effect.option)
    if (Option.isSome(settings) && !settings.value.enabled) {
      return yield* Effect.fail(new ServiceUnavailable({ error: "the scanner of this server is switched off (SCANNER_ENABLED=false): ask its operator" }))
    }
    const at = yield* now
    const budget = Option.isSome(settings) ? settings.value.monthlyTokenBudget : null
    if (budget !== null) {
      const used = yield* repo.tokensInMonth(accountId, monthStart(at))
      if (used >= budget) {
        return yield* Effect.fail(forbidden(`the monthly token budget of this account's scans is spent (${used} of ${budget} tokens); scans resume next month`))
      }
    }
    const statuses = yield* repo.engineStatus(accountId, brand.id)
    const last = statuses.reduce((newest, s) => Math.max(newest, s.scannedAt.getTime()), 0)
    if (last > 0 && at.getTime() - last < SCAN_REQUEST_COOLDOWN_MS) {
      const next = new Date(last + SCAN_REQUEST_COOLDOWN_MS).toISOString()
      return yield* Effect.fail(conflict(
        `this brand was scanned at ${new Date(last).toISOString()}; a scan on request waits an hour after the last one: ask again after ${next}`
      ))
    }
    const due = yield* repo.requestScan(accountId, brand.id, at)
    return {
      brand_slug: brand.slug,
      next_scan_at: due.toISOString(),
      engines: engines.map((e) => e.slug),
      scanner_interval_seconds: Option.isSome(settings) ? Math.round(Duration.toSeconds(settings.value.interval)) : 60
    } satisfies ScanRequest
  })

