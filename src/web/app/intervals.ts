/**
 * How the visibility screens show a 95% interval: its two ends beside the figure, "71.2 (68.9–73.4)",
 * never a symmetric "±" (intervals near 0 or 100 are lopsided: [20.65, 100] is not "100.0 ± 39.7").
 */

/** " (low–high)" on the figure's scale (`scale` 100 for a 0..1 rate shown in percent), or "" without one. */
export const intervalEnds = (interval: readonly [number, number] | null | undefined, scale: number, digits = 1) =>
  interval == null ? "" : ` (${(interval[0] * scale).toFixed(digits)}–${(interval[1] * scale).toFixed(digits)})`

/** What an interval means, in the words of docs/visibility.md ("Intervals"). */
export const INTERVAL_MEANING =
  "Figures in brackets are 95% intervals: how much the figure moves from one asking to the next on your monitored " +
  "prompts and engines (the engines' answer-to-answer variation), not how other prompts would fare."
