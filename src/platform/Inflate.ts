import { gunzipSync } from "node:zlib"
import { errorCode } from "./Guards.js"

/**
 * The one gzip inflater of the service (docs/security.md): every gzip body (log-drain deliveries,
 * their signatures, the observation import) goes through it. zlib inflates chunk by chunk and
 * stops as soon as the output passes the bound, so a gzip bomb costs at most about `maxBytes` of
 * memory and a few milliseconds, whatever it would inflate to.
 */

/** The gzip magic bytes (1f 8b). */
export const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

export type Inflated = { readonly ok: Uint8Array } | { readonly error: "inflates too large" | "bad gzip" }

/**
 * zlib's output chunk. The gzip trailer's last four bytes give the (last member's) inflated size:
 * when it is plausible (at most 128 times the body, and within the bound) the output fits one
 * chunk, which zlib returns without copying it again; a trailer that lies costs only more chunks,
 * never more than the bound. Otherwise about what logs inflate to (some 10 to 30 times), a power
 * of two from 16 KiB to 1 MiB. With zlib's 16 KiB default, a 1 MB delivery took some 70 chunks,
 * each allocated and then copied once more into the result.
 */
const chunkSizeFor = (bytes: Uint8Array, maxBytes: number) => {
  const n = bytes.length
  const trailer = n >= 18 ? (bytes[n - 4]! | (bytes[n - 3]! << 8) | (bytes[n - 2]! << 16) | (bytes[n - 1]! << 24)) >>> 0 : 0
  if (trailer > 0 && trailer <= 128 * n && trailer < maxBytes) return Math.max(1 << 14, trailer + 64)
  return Math.min(1 << 20, Math.max(1 << 14, 2 ** Math.ceil(Math.log2(n * 32))))
}

/** Inflates gzip (one or more members) up to `maxBytes`; past it, or for data that is not gzip, an error. */
export const gunzipBounded = (bytes: Uint8Array, maxBytes: number): Inflated => {
  try {
    return { ok: gunzipSync(bytes, { maxOutputLength: Math.max(1, maxBytes), chunkSize: chunkSizeFor(bytes, maxBytes) }) }
  } catch (error) {
    const code = errorCode(error)
    return { error: code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError ? "inflates too large" : "bad gzip" }
  }
}
