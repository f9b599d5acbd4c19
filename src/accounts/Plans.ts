/** One plan's entitlements, as seeded in migrations/0001_init.sql (decisions.md "Plans"). */
export interface Plan {
  readonly id: string
  readonly paid: boolean
  readonly maxKeys: number
  readonly maxBrands: number
  readonly maxPrompts: number
  readonly batchIngest: boolean
  readonly drainIngest: boolean
  readonly monthlyEvents: number
  readonly scanHours: number
}

export const PLAN_IDS = ["free", "starter", "growth", "enterprise"] as const
export type PlanId = (typeof PLAN_IDS)[number]
export const isPlanId = (s: string): s is PlanId => (PLAN_IDS as ReadonlyArray<string>).includes(s)

/** The same figures as the migration's seed, for in-memory fakes of the repositories. */
export const SEEDED_PLANS: Readonly<Record<PlanId, Plan>> = {
  free: { id: "free", paid: false, maxKeys: 1, maxBrands: 1, maxPrompts: 10, batchIngest: false, drainIngest: false, monthlyEvents: 0, scanHours: 168 },
  starter: { id: "starter", paid: true, maxKeys: 3, maxBrands: 3, maxPrompts: 50, batchIngest: true, drainIngest: false, monthlyEvents: 100_000, scanHours: 72 },
  growth: { id: "growth", paid: true, maxKeys: 10, maxBrands: 10, maxPrompts: 250, batchIngest: true, drainIngest: true, monthlyEvents: 1_000_000, scanHours: 24 },
  enterprise: { id: "enterprise", paid: true, maxKeys: 50, maxBrands: 100, maxPrompts: 2500, batchIngest: true, drainIngest: true, monthlyEvents: 50_000_000, scanHours: 6 }
}

/** "2026-11" style key of the calendar month (UTC) of a time. */
export const monthStart = (now: Date) => `${now.toISOString().slice(0, 7)}-01`
