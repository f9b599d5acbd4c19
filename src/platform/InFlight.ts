import { HttpServerResponse } from "@effect/platform"

/**
 * Reads in flight at once per API key and per dashboard session, in this process (docs/security.md,
 * "Bounds on a request's cost"). A token bucket bounds how many requests a key starts per minute, not
 * what they cost: a few slow reads started together (a 90-day fan-out report) held the database from
 * every other account. A request takes a slot of its key or session at the edge and gives it back
 * with its answer; past the bound it is refused at once with 429. An entry lives only while its
 * requests are in flight, so the table never holds more than the requests being served.
 */
export class InFlight {
  private readonly counts = new Map<string, number>()

  /** Takes a slot of `bucket` when fewer than `limit` are taken. */
  tryTake(bucket: string, limit: number): boolean {
    const taken = this.counts.get(bucket) ?? 0
    if (taken >= limit) return false
    this.counts.set(bucket, taken + 1)
    return true
  }

  release(bucket: string): void {
    const taken = this.counts.get(bucket) ?? 0
    if (taken <= 1) this.counts.delete(bucket)
    else this.counts.set(bucket, taken - 1)
  }

  get size(): number {
    return this.counts.size
  }
}

/** Seconds a refused client is asked to wait: a read usually finishes well within it. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1

/** The 429 of a read over its key's or session's bound. */
export const tooManyInFlight = (limit: number, holder: "API key" | "session") =>
  HttpServerResponse.unsafeJson(
    { error: `too many requests in flight for this ${holder}: at most ${limit} at a time; retry when one has answered` },
    { status: 429, headers: { "retry-after": String(IN_FLIGHT_RETRY_AFTER_SECONDS) } }
  )
