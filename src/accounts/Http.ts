import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { ServerApi } from "../api.js"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { BearerAuth, CurrentUser, SESSION_COOKIE, SessionAuth } from "./Api.js"
import { noteAccount } from "../platform/Hardening.js"
import { ForwardedAccount } from "./Forwarded.js"

/** The bearer check reads the raw header: HttpApiSecurity.bearer cannot tell "missing" from "Basic x". */
export const BearerAuthLive = Layer.effect(
  BearerAuth,
  Effect.map(ApiKeys, (keys) =>
    BearerAuth.of({
      bearer: () =>
        Effect.flatMap(Effect.serviceOption(ForwardedAccount), (forwarded) =>
          // A dashboard twin's in-process request carries the session's account (never set from outside).
          Option.isSome(forwarded)
            ? Effect.succeed(forwarded.value)
            : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => keys.authenticate(request.headers["authorization"])).pipe(
              // The request log line names the account (src/platform/Hardening.ts).
              Effect.tap((account) => noteAccount(account.accountId))
            ))
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

/** Secure only when the request came over TLS (directly or through a proxy), so plain-http localhost works. */
const isHttps = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["x-forwarded-proto"] === "https" || request.url.startsWith("https:")

const setSessionCookie = (token: string, expires: Date | undefined) =>
  HttpApp.appendPreResponseHandler((request, response) =>
    Effect.orDie(
      HttpServerResponse.setCookie(response, SESSION_COOKIE, token, {
        httpOnly: true,
        sameSite: "lax",
        path: "/",
        secure: isHttps(request),
        ...(expires ? { expires } : { maxAge: 0 })
      })
    )
  )

export const AuthHttpLive = HttpApiBuilder.group(ServerApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("signup", ({ payload }) =>
        Effect.tap(accounts.signup(payload), (signedIn) => setSessionCookie(signedIn.token, signedIn.expiresAt)).pipe(
          Effect.map((signedIn) => signedIn.body)
        ))
      .handle("login", ({ payload }) =>
        Effect.tap(accounts.login(payload), (signedIn) => setSessionCookie(signedIn.token, signedIn.expiresAt)).pipe(
          Effect.map((signedIn) => signedIn.body)
        ))
      .handle("logout", ({ request }) =>
        Effect.zipRight(accounts.logout(request.cookies[SESSION_COOKIE] ?? ""), setSessionCookie("", undefined)))
  }))

export const MeHttpLive = HttpApiBuilder.group(ServerApi, "me", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const keys = yield* ApiKeys
    return handlers
      .handle("me", () =>
        Effect.flatMap(CurrentUser, (user) => accounts.me(user)).pipe(
          Effect.map(({ account, plan, usage, user }) => ({
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
            }
          }))
        ))
      .handle("listKeys", () => Effect.flatMap(CurrentUser, (user) => keys.list(user.accountId)))
      .handle("createKey", ({ payload }) => Effect.flatMap(CurrentUser, (user) => keys.create(user.accountId, payload.name)))
      .handle("revokeKey", ({ path }) => Effect.flatMap(CurrentUser, (user) => keys.revoke(user.accountId, path.id)))
  }))
