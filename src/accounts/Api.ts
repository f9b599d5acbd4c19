import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PlanLimitReachedError,
  RateLimitedError,
  UnauthorizedError
} from "../platform/HttpErrors.js"
import { DateTime } from "../platform/Schemas.js"

// ---------------------------------------------------------------------------
// Authentication middlewares
// ---------------------------------------------------------------------------

/** The account (and key) a public request is authenticated as. Every query is scoped by accountId. */
export class CurrentAccount extends Context.Tag("CurrentAccount")<
  CurrentAccount,
  { readonly accountId: number; readonly keyId: string }
>() {}

/**
 * Bearer API keys on /api/public/v1. The scheme stays in `security` so OpenAPI lists it;
 * the handler reads the raw Authorization header itself to tell the four 401 cases apart.
 */
export class BearerAuth extends HttpApiMiddleware.Tag<BearerAuth>()("BearerAuth", {
  // 403 for a key over its plan's cap after a downgrade (docs/security.md "Plan downgrades").
  failure: Schema.Union(UnauthorizedError, ForbiddenError),
  provides: CurrentAccount,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An API key created in the web application: `aivkey_...`")
    )
  }
}) {}

export const SESSION_COOKIE = "aiv_session"
export const sessionSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE })

/** The signed-in user of a dashboard request. */
export class CurrentUser extends Context.Tag("CurrentUser")<
  CurrentUser,
  { readonly userId: number; readonly accountId: number; readonly email: string; readonly tokenHash: string }
>() {}

/** Cookie sessions on /api/v1 (the web application); an API key cannot pass it. */
export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("SessionAuth", {
  failure: UnauthorizedError,
  provides: CurrentUser,
  security: { session: sessionSecurity }
}) {}

// ---------------------------------------------------------------------------
// Dashboard: sign-up, sign-in, the account, API keys
// ---------------------------------------------------------------------------

export const AccountSummary = Schema.Struct({ id: Schema.Int, name: Schema.String, plan: Schema.String })
export const UserSummary = Schema.Struct({ email: Schema.String })

export const SessionBody = Schema.Struct({ account: AccountSummary, user: UserSummary })

/** The longest account name and API key name as sent (docs/security.md "Sizes bounded at the source"). */
export const ACCOUNT_NAME_MAX = 200
export const KEY_NAME_MAX_SENT = 200

export const SignupPayload = Schema.Struct({
  email: Schema.String,
  password: Schema.String,
  account_name: Schema.String.pipe(
    Schema.maxLength(ACCOUNT_NAME_MAX, { message: () => `must be at most ${ACCOUNT_NAME_MAX} characters` })
  )
})
export const LoginPayload = Schema.Struct({ email: Schema.String, password: Schema.String })

export const PlanEntitlements = Schema.Struct({
  id: Schema.String,
  paid: Schema.Boolean,
  max_api_keys: Schema.Int,
  max_brands: Schema.Int,
  max_prompts: Schema.Int,
  batch_ingest: Schema.Boolean,
  drain_ingest: Schema.Boolean,
  monthly_events: Schema.Int,
  scan_frequency_hours: Schema.Int
})

export const MeBody = Schema.Struct({
  account: AccountSummary,
  user: UserSummary,
  plan: PlanEntitlements,
  usage: Schema.Struct({
    brands: Schema.Int,
    prompts: Schema.Int,
    active_api_keys: Schema.Int,
    monthly_events: Schema.Int,
    month: Schema.String
  }),
  data_fill: Schema.optional(
    Schema.Struct({
      status: Schema.Literal("filling", "ready", "failed").annotations({
        description: "filling: the workspace's data is still being written in the background (its pages fill in); ready: done; failed: stopped (see the server log)"
      }),
      days: Schema.Int.annotations({ description: "Days of data the fill writes" }),
      days_filled: Schema.Int.annotations({ description: "Days written so far (every brand's answers of the day)" }),
      started_at: Schema.String.annotations({ description: "ISO 8601" }),
      finished_at: Schema.NullOr(Schema.String).annotations({ description: "ISO 8601; null while filling" })
    }).annotations({
      description: "Present only for a workspace this server fills in the background (the demo workspace of DEMO=1)"
    })
  )
})

export const ApiKeyRecord = Schema.Struct({
  id: Schema.UUID,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "First 14 characters of the key plus an ellipsis" }),
  created_at: DateTime,
  last_used_at: Schema.NullOr(DateTime),
  revoked_at: Schema.NullOr(DateTime)
})

export const ApiKeyList = Schema.Struct({
  keys: Schema.Array(ApiKeyRecord),
  count: Schema.Int,
  limit: Schema.Int.annotations({ description: "Active keys the plan allows" })
})

export const CreatedApiKey = Schema.Struct({
  id: Schema.UUID,
  name: Schema.String,
  key: Schema.String.annotations({ description: "The full key: shown this once, never again" }),
  prefix: Schema.String,
  created_at: DateTime
})

export const CreateKeyPayload = Schema.Struct({
  name: Schema.optional(
    Schema.NullOr(
      Schema.String.pipe(
        Schema.maxLength(KEY_NAME_MAX_SENT, { message: () => `must be at most ${KEY_NAME_MAX_SENT} characters` })
      ).annotations({ description: "Trimmed to 80 characters" })
    )
  )
})

export const ChangePasswordPayload = Schema.Struct({
  current_password: Schema.String,
  new_password: Schema.String.annotations({ description: "10 characters to 1,024 bytes, not only white space" })
})

export const KeyIdPath = Schema.Struct({
  id: Schema.UUID.annotations({ message: () => "must be a UUID" })
})

export class AuthGroup extends HttpApiGroup.make("auth")
  .annotate(OpenApi.Description, "Sign-up, sign-in and sign-out: the session cookie of the web application")
  .add(
    HttpApiEndpoint.post("signup", "/auth/signup")
      .setPayload(SignupPayload)
      .addSuccess(SessionBody, { status: 201 })
      .addError(BadRequestError)
      .addError(ConflictError)
      .addError(RateLimitedError)
      .annotate(OpenApi.Summary, "Create an account and sign in")
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .setPayload(LoginPayload)
      .addSuccess(SessionBody)
      .addError(BadRequestError)
      .addError(UnauthorizedError)
      .addError(RateLimitedError)
      .annotate(OpenApi.Summary, "Sign in with email and password")
  )
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout").addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Sign out: end the session")
  )
  .addError(ForbiddenError)
{}

export class MeGroup extends HttpApiGroup.make("me")
  .annotate(OpenApi.Description, "The signed-in account and its API keys")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(MeBody).annotate(OpenApi.Summary, "The signed-in user and account"))
  .add(HttpApiEndpoint.get("listKeys", "/me/api-keys").addSuccess(ApiKeyList).annotate(OpenApi.Summary, "The account's API keys"))
  .add(
    HttpApiEndpoint.post("createKey", "/me/api-keys")
      .setPayload(CreateKeyPayload)
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(BadRequestError)
      .addError(PlanLimitReachedError)
      .annotate(OpenApi.Summary, "Create an API key (shown once)")
  )
  .add(
    HttpApiEndpoint.post("revokeKey", "/me/api-keys/:id/revoke")
      .setPath(KeyIdPath)
      .addSuccess(ApiKeyRecord)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Revoke an API key")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/me/password")
      .setPayload(ChangePasswordPayload)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(BadRequestError)
      .addError(UnauthorizedError)
      .addError(RateLimitedError)
      .annotate(OpenApi.Summary, "Change the password (ends every other session)")
      .annotate(
        OpenApi.Description,
        "Needs the current password. Every other session of the user ends; this one is replaced by a new session " +
          "(a new cookie). Rate limited like sign-in (per client IP and per email)."
      )
  )
  .add(
    HttpApiEndpoint.post("signOutEverywhere", "/me/sign-out-everywhere")
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Sign out everywhere")
      .annotate(OpenApi.Description, "Ends every session of the user, this one included, and clears the cookie.")
  )
  .addError(ForbiddenError)
  .middleware(SessionAuth)
{}
