import { gunzipSync } from "node:zlib"

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
 * zlib's output chunk: about what the body inflates to (logs shrink some 10 to 30 times), a power of
 * two from 16 KiB to 1 MiB. With its 16 KiB default, a 1 MB delivery took some 70 chunks, each
 * allocated and then copied once more into the result: a third of the time of the inflate.
 */
const chunkSizeFor = (compressed: number) => Math.min(1 << 20, Math.max(1 << 14, 2 ** Math.ceil(Math.log2(compressed * 32))))

/** Inflates gzip (one or more members) up to `maxBytes`; past it, or for data that is not gzip, an error. */
export const gunzipBounded = (bytes: Uint8Array, maxBytes: number): Inflated => {
  try {
    return { ok: gunzipSync(bytes, { maxOutputLength: Math.max(1, maxBytes), chunkSize: chunkSizeFor(bytes.length) }) }
  } catch (error) {
    const code = (error as { code?: string }).code
    return { error: code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError ? "inflates too large" : "bad gzip" }
  }
}
