/**
 * The 95% intervals that qualify every rate the service reports (docs/visibility.md, "Intervals"):
 * Wilson for a proportion, Newcombe's hybrid score interval for the difference of two proportions,
 * and the linearised ratio-estimator interval for a share of voice. Pure numbers, no I/O: the
 * visibility reads and the alerts both use them.
 */

/** The two-sided 95% normal quantile. */
export const Z95 = 1.959964

/** `[low, high]` on the scale of the rate it qualifies. */
export type Interval = readonly [number, number]

const roundTo = (value: number, decimals: number): number => {
  const factor = 10 ** decimals
  // Adding EPSILON keeps 0.xxxx5 from rounding down through binary representation error.
  return Math.round((value + Number.EPSILON * Math.sign(value)) * factor) / factor
}

/** An interval rounded to 4 decimals (rates on 0..1), the form every `*_ci95` field of 0..1 takes. */
export const roundInterval = (interval: Interval | null): Interval | null =>
  interval === null ? null : [roundTo(interval[0], 4), roundTo(interval[1], 4)]

/** An interval of 0..1 moved to the 0..100 score scale, rounded to 2 decimals. */
export const scoreInterval = (interval: Interval | null): Interval | null =>
  interval === null ? null : [roundTo(interval[0] * 100, 2), roundTo(interval[1] * 100, 2)]

/** Wilson score interval of k successes in n trials; null when n is 0. Unrounded. */
export const wilson = (k: number, n: number): Interval | null => {
  if (n <= 0) return null
  const p = k / n
  const z2 = Z95 * Z95
  const denominator = 1 + z2 / n
  const center = (p + z2 / (2 * n)) / denominator
  const half = (Z95 / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  // Within [0, 1] by construction; the clamp only drops floating-point residue (-0 at p = 0).
  return [Math.max(0, center - half), Math.min(1, center + half)]
}

/** A difference of two proportions with its interval and whether the interval excludes 0. */
export interface Difference {
  /** p1 − p2, unrounded; null when either n is 0. */
  readonly delta: number | null
  /** Unrounded interval; null when either n is 0. */
  readonly interval: Interval | null
  readonly significant: boolean
}

/**
 * Newcombe's hybrid score interval of p1 − p2 (this period minus the previous one), built from the two
 * Wilson intervals. Undefined (null, not significant) when either period has no observation.
 */
export const newcombe = (k1: number, n1: number, k2: number, n2: number): Difference => {
  const w1 = wilson(k1, n1)
  const w2 = wilson(k2, n2)
  if (w1 === null || w2 === null) return { delta: null, interval: null, significant: false }
  const p1 = k1 / n1
  const p2 = k2 / n2
  const d = p1 - p2
  const low = d - Math.sqrt((p1 - w1[0]) ** 2 + (w2[1] - p2) ** 2)
  const high = d + Math.sqrt((w1[1] - p1) ** 2 + (p2 - w2[0]) ** 2)
  return { delta: d, interval: [low, high], significant: low > 0 || high < 0 }
}

/**
 * The sufficient sums of a share of voice over n observations (the sampling unit): for observation i,
 * a_i = 1 when the entity is mentioned, m_i = the number of entities mentioned. They let SQL (or a
 * loop) accumulate the population once and this module finish the arithmetic.
 */
export interface ShareSums {
  /** Observations in the population (including those that mention no entity). */
  readonly n: number
  /** Σ a_i */
  readonly sumA: number
  /** Σ m_i */
  readonly sumM: number
  /** Σ a_i² (= Σ a_i when a_i is 0 or 1) */
  readonly sumA2: number
  /** Σ a_i·m_i */
  readonly sumAM: number
  /** Σ m_i² */
  readonly sumM2: number
  /** Observations with m_i > 0 (that mention at least one entity): the n of the fallback when var is 0. */
  readonly naming: number
}

/** Share of voice s = Σa / Σm with its variance; share is 0 when nothing is mentioned. */
export interface Share {
  readonly share: number
  /** The linearised variance; null when n < 2 or nothing was mentioned. */
  readonly variance: number | null
  /** Observations that mention at least one entity. */
  readonly naming: number
}

/** s and var = Σ (a_i − s·m_i)² / (n (n − 1) m̄²), expanded over the sums. */
export const shareOfVoice = (sums: ShareSums): Share => {
  const { n, naming, sumA, sumM } = sums
  if (sumM <= 0) return { share: 0, variance: null, naming }
  const s = sumA / sumM
  if (n < 2) return { share: s, variance: null, naming }
  const meanM = sumM / n
  const squares = sums.sumA2 - 2 * s * sums.sumAM + s * s * sums.sumM2
  // The expansion can leave a tiny residue (either sign) where the exact sum is 0.
  const variance = squares <= 1e-12 * Math.max(1, sums.sumM2) ? 0 : squares / (n * (n - 1) * meanM * meanM)
  return { share: s, variance, naming }
}

/**
 * `[max(0, s − z·sd), min(1, s + z·sd)]`, unrounded; null when the variance is undefined. When the
 * variance is 0 (s is 0 or 1 with entities mentioned) that would be a point: the interval is then the
 * Wilson interval of s over the observations that mention at least one entity (null when there are none).
 */
export const shareInterval = (share: Share): Interval | null => {
  if (share.variance === null) return null
  if (share.variance === 0) return share.naming > 0 ? wilson(share.share * share.naming, share.naming) : null
  const half = Z95 * Math.sqrt(share.variance)
  return [Math.max(0, share.share - half), Math.min(1, share.share + half)]
}

/** The interval of a share's delta, `delta ± z·sqrt(var_this + var_previous)`; null when either is undefined. */
export const shareDelta = (current: Share, previous: Share): Difference => {
  if (current.variance === null || previous.variance === null) {
    return { delta: null, interval: null, significant: false }
  }
  const d = current.share - previous.share
  const half = Z95 * Math.sqrt(current.variance + previous.variance)
  const interval: Interval = [d - half, d + half]
  return { delta: d, interval, significant: interval[0] > 0 || interval[1] < 0 }
}

/** Sums of a population given observation by observation (a_i in {0, 1}). */
export const shareSumsOf = (observations: ReadonlyArray<{ readonly mentioned: boolean; readonly entities: number }>): ShareSums => {
  let sumA = 0
  let sumM = 0
  let sumAM = 0
  let sumM2 = 0
  let naming = 0
  for (const o of observations) {
    const a = o.mentioned ? 1 : 0
    sumA += a
    sumM += o.entities
    sumAM += a * o.entities
    sumM2 += o.entities * o.entities
    if (o.entities > 0) naming++
  }
  return { n: observations.length, sumA, sumM, sumA2: sumA, sumAM, sumM2, naming }
}
