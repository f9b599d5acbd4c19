/** PostgreSQL unique_violation (23505), as both back ends report it on the error's `code`. */
export const isUniqueViolation = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "23505"

/**
 * Text PostgreSQL refuses to store (a NUL character: 22021 character_not_in_repertoire / invalid
 * byte sequence; 22P05 untranslatable_character): bad input, answered 400, not a database outage.
 */
export const isUnstorableText = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && (cause.code === "22021" || cause.code === "22P05")

/**
 * A statement PostgreSQL cancelled (57014 query_canceled): on this service's connections, the statement
 * timeout (STATEMENT_TIMEOUT_MS). Answered 503 "took too long", not 500: the request may work again
 * when the database is less busy or asked for less.
 */
export const isStatementTimeout = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "57014"
