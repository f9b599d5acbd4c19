import { constants, gunzipSync } from "node:zlib"

/**
 * What a gzip stream cut short still holds: inflation up to the cut (a sync flush at the end
 * instead of an error). Null when the data is corrupt rather than cut, or when it inflates past
 * `maxBytes`. The last line of the result is usually a partial record: the caller drops it.
 */
export const gunzipTruncated = (bytes: Uint8Array, maxBytes: number): Uint8Array | null => {
  try {
    const out = gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes })
    return out.length === 0 ? null : out
  } catch {
    return null
  }
}
