/** The verdict of a crawler hit (docs/verification.md), in the order breakdowns list them. */
export type Verdict = "verified" | "spoofed" | "unverified"
export const VERDICTS: ReadonlyArray<Verdict> = ["verified", "spoofed", "unverified"]
export const isVerdict = (s: unknown): s is Verdict => s === "verified" || s === "spoofed" || s === "unverified"
