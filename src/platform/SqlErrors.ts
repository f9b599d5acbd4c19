/** PostgreSQL unique_violation (23505), as both back ends report it on the error's `code`. */
export const isUniqueViolation = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "23505"
