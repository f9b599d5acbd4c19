/**
 * Type guards for values from outside (parsed JSON, caught exceptions): what the code reads of them is
 * checked, never asserted with a cast (docs/architecture.md, "No unchecked casts").
 */

/** A JSON object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The `code` an error carries (pg, node's fs, dns and zlib errors name their kind there); undefined when none. */
export const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

/** The `message` of an error when it has one, else the value as text. */
export const errorMessage = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && error.message != null ? String(error.message) : String(error)
