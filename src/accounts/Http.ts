import { WorkspaceFill } from "../platform/WorkspaceFill.js"
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { ServerApi } from "../api.js"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { BearerAuth, CurrentUser, SESSION_COOKIE, SessionAuth } from "./Api.js"
import { noteAccount, recordAccount, RequestMeta } from "../platform/RequestMeta.js"
import { AppConfig } from "../platform/Config.js"
import { ForwardedAccount } from "./Forwarded.js"
import { clientIp } from "../platform/ClientIp.js"
import { canonicalEmail } from "../platform/Email.js"
import { RateLimited } from "../platform/HttpErrors.js"
import { rateLimitHeaders, RateLimiter, RATE_LIMITED } from "../platform/RateLimiter.js"

/**
 * The bearer check reads the raw header: HttpApiSecurity.bearer cannot tell "missing" from "Basic x".
 * It runs on every public request, so what it needs is read from the request's context in one step.
 */
export const BearerAuthLive = Layer.effect(
  BearerAuth,
  Effect.map(ApiKeys, (keys) =>
    BearerAuth.of({
      bearer: () =>
        Effect.contextWithEffect((context: Context.Context<HttpServerRequest.HttpServerRequest>) => {
          // A dashboard twin's in-process request carries the session's account (never set from outside).
          const forwarded = Context.getOption(context, ForwardedAccount)
          if (Option.isSome(forwarded)) return Effect.succeed(forwarded.value)
          const request = Context.get(context, HttpServerRequest.HttpServerRequest)
          // The request log line names the account (src/platform/Middleware.ts).
          const meta = Context.getOption(context, RequestMeta)
          return Effect.map(keys.authenticate(request.headers["authorization"]), (account) => {
            recordAccount(meta, account.accountId)
            return account
          })
        })
    }))
)

export const SessionAuthLive = Layer.effect(
  SessionAuth,
  Effect.map(Accounts, (accounts) =>
    SessionAuth.of({
      session: (token) =>
        accounts.authenticateSession(Redacted.value(token)).pipe(Effect.tap((user) => noteAccount(user.accountId)))
    }))
)

/**
 * Secure when the server is reached over TLS, by configuration or trusted headers only: PUBLIC_URL
 * starting https://, or X-Forwarded-Proto: https from the proxy with TRUST_PROXY (any client can
 * send that header), or a TLS request. Plain-http localhost keeps working (docs/security.md).
 */
const isHttps = (request: HttpServerRequest.HttpServerRequest, secure: SecureCookieRule) =>
  secure.publicHttps ||
  (secure.trustProxy && request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https") ||
  (request.source instanceof Request && request.source.url.startsWith("https:"))

interface SecureCookieRule {
  readonly publicHttps: boolean
  readonly trustProxy: boolean
}

const setSessionCookie = (token: string, expires: Date | undefined, secure: SecureCookieRule) =>
  HttpApp.appendPreResponseHandler((request, response) =>
    Effect.orDie(
      HttpServerResponse.setCookie(response, SESSION_COOKIE, token, {
        httpOnly: true,
        sameSite: "lax",
        path: "/",
        secure: isHttps(request, secure),
        ...(expires ? { expires } : { maxAge: 0 })
      })
    )
  )

export const AuthHttpLive = HttpApiBuilder.group(ServerApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const { publicUrl, trustProxy } = yield* AppConfig
    const secure: SecureCookieRule = {
      trustProxy,
      publicHttps: Option.isSome(publicUrl) && publicUrl.value.toLowerCase().startsWith("https://")
    }
    return handlers
      .handle("signup", ({ payload }) =>
        Effect.tap(accounts.signup(payload), (signedIn) => setSessionCookie(signedIn.token, signedIn.expiresAt, secure)).pipe(
          Effect.map((signedIn) => signedIn.body)
        ))
      .handle("login", ({ payload }) =>
        Effect.tap(accounts.login(payload), (signedIn) => setSessionCookie(signedIn.token, signedIn.expiresAt, secure)).pipe(
          Effect.map((signedIn) => signedIn.body)
        ))
      .handle("logout", ({ request }) =>
        Effect.zipRight(accounts.logout(request.cookies[SESSION_COOKIE] ?? ""), setSessionCookie("", undefined, secure)))
  }))

export const MeHttpLive = HttpApiBuilder.group(ServerApi, "me", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const keys = yield* ApiKeys
    const fills = yield* WorkspaceFill
    const limiter = yield* RateLimiter
    const { publicUrl, trustProxy } = yield* AppConfig
    const secure: SecureCookieRule = {
      trustProxy,
      publicHttps: Option.isSome(publicUrl) && publicUrl.value.toLowerCase().startsWith("https://")
    }
    /**
     * A password change guesses a password like a sign-in does: it takes a token from the same
     * buckets, the client IP's and the user's email's (the canonical form the sign-in uses), so
     * neither surface adds guesses to the other's allowance.
     */
    const signInAllowance = (request: HttpServerRequest.HttpServerRequest, email: string) =>
      Effect.flatMap(
        limiter.check([
          { bucket: "auth-ip:" + (clientIp(request, trustProxy) ?? "unknown"), rule: limiter.rules.authIp },
          { bucket: "auth-email:" + canonicalEmail(email).slice(0, 320), rule: limiter.rules.authEmail }
        ]),
        (decision) =>
          Option.isNone(decision)
            ? Effect.void
            : Effect.zipRight(
              HttpApp.appendPreResponseHandler((_request, response) =>
                Effect.succeed(HttpServerResponse.setHeaders(response, rateLimitHeaders(decision.value)))
              ),
              decision.value.allowed ? Effect.void : Effect.fail(new RateLimited({ error: RATE_LIMITED }))
            )
      )
    return handlers
      .handle("me", () =>
        Effect.flatMap(CurrentUser, (user) => Effect.zip(accounts.me(user), fills.of(user.accountId))).pipe(
          Effect.map(([{ account, plan, usage, user }, fill]) => ({
            account,
            user,
            plan: {
              id: plan.id,
              paid: plan.paid,
              max_api_keys: plan.maxKeys,
              max_brands: plan.maxBrands,
              max_prompts: plan.maxPrompts,
              batch_ingest: plan.batchIngest,
              drain_ingest: plan.drainIngest,
              monthly_events: plan.monthlyEvents,
              scan_frequency_hours: plan.scanHours
            },
            usage: {
              brands: usage.brands,
              prompts: usage.prompts,
              active_api_keys: usage.activeKeys,
              monthly_events: usage.monthlyEvents,
              month: usage.month
            },
            // Only while (or once) this process fills the account's workspace in the background.
            ...Option.match(fill, {
              onNone: () => ({}),
              onSome: (f) => ({
                data_fill: {
                  status: f.status,
                  days: f.days,
                  days_filled: f.daysFilled,
                  started_at: f.startedAt.toISOString(),
                  finished_at: f.finishedAt === null ? null : f.finishedAt.toISOString()
                }
              })
            })
          }))
        ))
      .handle("listKeys", () => Effect.flatMap(CurrentUser, (user) => keys.list(user.accountId)))
      .handle("createKey", ({ payload }) => Effect.flatMap(CurrentUser, (user) => keys.create(user.accountId, payload.name)))
      .handle("revokeKey", ({ path }) => Effect.flatMap(CurrentUser, (user) => keys.revoke(user.accountId, path.id)))
      .handle("changePassword", ({ payload, request }) =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          yield* signInAllowance(request, user.email)
          const session = yield* accounts.changePassword(user, payload)
          yield* setSessionCookie(session.token, session.expiresAt, secure)
        }))
      .handle("signOutEverywhere", () =>
        Effect.flatMap(CurrentUser, (user) =>
          Effect.zipRight(accounts.signOutEverywhere(user), setSessionCookie("", undefined, secure))))
  }))
