import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/**
 * Errors are tagged values in the domain, and plain JSON bodies on the wire.
 *
 * HttpApi encodes every error of an API through one union where the first matching
 * member wins, so several plain `{error}` schemas with different statuses would all
 * leave with the first one's status. Each wire schema below therefore transforms a
 * plain body into its tagged class: encoding matches by class, the body carries no
 * `_tag`, and the typed client decodes a status back into the right class.
 */
const wire = <Tag extends string, Fields extends Schema.Struct.Fields, Self>(
  cls: Schema.Schema<Self, Schema.Struct.Encoded<Fields> & { readonly _tag: Tag }> & { readonly _tag: Tag },
  fields: Fields,
  status: number,
  description: string
) =>
  Schema.transform(Schema.Struct(fields), cls, {
    strict: false,
    decode: (body) => ({ ...body, _tag: cls._tag }),
    encode: ({ _tag: _, ...body }) => body
  }).annotations(HttpApiSchema.annotations({ status, description }))

const errorFields = { error: Schema.String }

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", errorFields) {}
export const BadRequestError = wire(BadRequest, errorFields, 400, "The request is malformed or a parameter is invalid")

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", errorFields) {}
export const UnauthorizedError = wire(Unauthorized, errorFields, 401, "Missing, malformed, unknown or revoked credentials")

const planLimitFields = {
  error: Schema.Literal("plan_limit_reached"),
  plan: Schema.String,
  count: Schema.Int,
  limit: Schema.Int,
  hint: Schema.String
}
export class PlanLimitReached extends Schema.TaggedError<PlanLimitReached>()("PlanLimitReached", planLimitFields) {}
export const PlanLimitReachedError = wire(PlanLimitReached, planLimitFields, 402, "The account's plan cap is reached")

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", errorFields) {}
export const ForbiddenError = wire(Forbidden, errorFields, 403, "Not allowed for this account or plan")

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", errorFields) {}
export const NotFoundError = wire(NotFound, errorFields, 404, "No such resource in this account")

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", errorFields) {}
export const ConflictError = wire(Conflict, errorFields, 409, "The resource already exists")

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", errorFields) {}
export const PayloadTooLargeError = wire(
  PayloadTooLarge,
  errorFields,
  413,
  "The request carries too much: a body over the server's cap (MAX_BODY_BYTES) on any route, or too many records"
)

/** The body of the edge's 429 (RateLimiter.ts). */
export const RATE_LIMITED = "rate limit exceeded"

/**
 * The edge's 429 (RateLimiter.ts), and that of a check an endpoint makes itself (the password change's
 * sign-in buckets) with the same body. Its message is a literal, so that a client decoding a 429 tells it
 * from the monthly cap's (QuotaExceeded, whose body has more fields).
 */
const rateLimitedFields = { error: Schema.Literal(RATE_LIMITED) }
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", rateLimitedFields) {}
export const RateLimitedError = wire(
  RateLimited,
  rateLimitedFields,
  429,
  "Too many requests: a rate limit refused this one. Retry-After (and RateLimit-Reset, the same moment) says in how many seconds to retry"
)

const quotaFields = { error: Schema.String, monthly_used: Schema.Int, monthly_cap: Schema.Int }
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", quotaFields) {}
export const QuotaExceededError = wire(QuotaExceeded, quotaFields, 429, "The monthly server-log event cap is reached")

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", errorFields) {}
export const ServiceUnavailableError = wire(
  ServiceUnavailable,
  errorFields,
  503,
  "The database is unavailable, or the server is shutting down (then with Retry-After: 5 and Connection: close)"
)

/** Shorthands used by services: the message is the whole contract. */
export const badRequest = (error: string) => new BadRequest({ error })
export const notFound = (error: string) => new NotFound({ error })
export const forbidden = (error: string) => new Forbidden({ error })
export const conflict = (error: string) => new Conflict({ error })
export const unauthorized = (error: string) => new Unauthorized({ error })

