import { Effect, Layer } from "effect"
import {
  observationKey,
  ObservationsRepo,
  type DueBrand,
  type EngineScanStatus,
  type EntityRow,
  type PromptRef,
  type ScanFailure,
  type StoredObservation
} from "../../src/observations/Repo.js"

/** What the fake observations repository reads of the shared in-memory store. */
export interface ObservationsStoreView {
  readonly brands: ReadonlyArray<{ id: number; accountId: number; slug: string; nextScanAt: Date; addedAt: Date }>
  readonly competitors: ReadonlyArray<EntityRow & { accountId: number; brandId: number; createdAt: Date }>
  readonly prompts: ReadonlyArray<PromptRef & { accountId: number; brandId: number; createdAt: Date }>
  readonly scanHours: (accountId: number) => number
  readonly maxBrands: (accountId: number) => number
  readonly emailOf: (accountId: number) => string
}

/** In-memory ObservationsRepo with the same contract as the SQL one (idempotent by key). */
export const makeFakeObservationsRepo = (view: ObservationsStoreView) => {
  const observations: Array<StoredObservation & { id: number }> = []
  const keys = new Set<string>()
  const failures: Array<ScanFailure> = []
  const statuses = new Map<string, EngineScanStatus & { accountId: number; brandId: number }>()
  let nextId = 1
  const layer = Layer.succeed(ObservationsRepo, {
    competitors: (accountId, brandId) =>
      Effect.sync(() =>
        view.competitors
          .filter((c) => c.accountId === accountId && c.brandId === brandId)
          .map(({ id, name, domain, aliases, pinned }) => ({ id, name, domain, aliases, pinned }))
      ),
    prompts: (accountId, brandId) =>
      Effect.sync(() =>
        view.prompts
          .filter((p) => p.accountId === accountId && p.brandId === brandId)
          .map(({ id, num, prompt }) => ({ id, num, prompt }))
      ),
    insert: (rows) =>
      Effect.sync(() => {
        let inserted = 0
        for (const row of rows) {
          const key = `${row.brandId}|${observationKey(row)}`
          if (keys.has(key)) continue
          keys.add(key)
          observations.push({ ...row, id: nextId++ })
          inserted++
        }
        return { inserted }
      }),
    deleteForBrand: (accountId, brandId) =>
      Effect.sync(() => {
        for (let i = observations.length - 1; i >= 0; i--) {
          const o = observations[i]!
          if (o.accountId === accountId && o.brandId === brandId) {
            keys.delete(`${o.brandId}|${observationKey(o)}`)
            observations.splice(i, 1)
          }
        }
      }),
    count: (accountId, brandId) =>
      Effect.sync(() => observations.filter((o) => o.accountId === accountId && o.brandId === brandId).length),
    accountsWithSlug: (slug) =>
      Effect.sync(() =>
        view.brands.filter((b) => b.slug === slug).map((b) => ({ accountId: b.accountId, email: view.emailOf(b.accountId) }))
      ),
    requestScan: (accountId, brandId, at) =>
      Effect.sync(() => {
        const brand = view.brands.find((b) => b.accountId === accountId && b.id === brandId)
        if (brand === undefined) return at
        if (at < brand.nextScanAt) brand.nextScanAt = at
        return brand.nextScanAt
      }),
    claimDue: (now, limit) =>
      Effect.sync(() => {
        // The account's oldest brands up to its plan's cap are scanned, never the others.
        const withinCap = (brand: (typeof view.brands)[number]) =>
          view.brands.filter((o) =>
            o.accountId === brand.accountId &&
            (o.addedAt.getTime() < brand.addedAt.getTime() || (o.addedAt.getTime() === brand.addedAt.getTime() && o.id < brand.id))
          ).length < view.maxBrands(brand.accountId)
        const due = view.brands
          .filter((b) => b.nextScanAt <= now && withinCap(b))
          .sort((a, b) => a.nextScanAt.getTime() - b.nextScanAt.getTime() || a.id - b.id)
          .slice(0, limit)
        const claimed: Array<DueBrand> = []
        for (const brand of due) {
          brand.nextScanAt = new Date(now.getTime() + view.scanHours(brand.accountId) * 3600_000)
          claimed.push({ id: brand.id, accountId: brand.accountId, slug: brand.slug })
        }
        return claimed
      }),
    scanTargets: (slug) =>
      Effect.sync(() =>
        view.brands.filter((b) => slug === null || b.slug === slug).map((b) => ({ id: b.id, accountId: b.accountId, slug: b.slug }))
      ),
    recordFailures: (rows) => Effect.sync(() => void failures.push(...rows)),
    failures: (accountId, brandId) =>
      Effect.sync(() => failures.filter((f) => f.accountId === accountId && f.brandId === brandId)),
    tokensInMonth: (accountId, month) =>
      Effect.sync(() =>
        observations
          .filter((o) => o.accountId === accountId && o.usage !== undefined && o.observedAt.toISOString().slice(0, 7) === month.slice(0, 7))
          .reduce((sum, o) => sum + o.usage!.inputTokens + o.usage!.outputTokens, 0)
      ),
    recordEngineStatus: (accountId, brandId, rows) =>
      Effect.sync(() => {
        for (const row of rows) statuses.set(`${brandId}|${row.engine}`, { ...row, accountId, brandId })
      }),
    engineStatus: (accountId, brandId) =>
      Effect.sync(() =>
        [...statuses.values()]
          .filter((s) => s.accountId === accountId && s.brandId === brandId)
          .map(({ accountId: _a, brandId: _b, ...status }) => status)
          .sort((a, b) => (a.engine < b.engine ? -1 : 1))
      )
  })
  return { layer, observations, failures }
}
