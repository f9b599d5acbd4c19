/** One plan's entitlements, as seeded in migrations/0001_init.sql (docs/decisions.md "Plans"). */
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
