import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../platform/Config.js"
import { canonicalEmail } from "../platform/Email.js"
import { badRequest, conflict, type BadRequest, type Conflict, Unauthorized } from "../platform/HttpErrors.js"
import { accountCache, Invalidations, InvalidationsLive } from "../platform/Invalidations.js"
import { now } from "../platform/Time.js"
import { KeyHashing, KeyHashingLive } from "./KeyHashing.js"
import { PasswordHasher } from "./Passwords.js"
import { monthStart } from "../platform/Days.js"
import type { Plan } from "./Plans.js"
import { AccountsRepo, type AccountRow } from "./Repo.js"

export interface SessionUser {
  readonly userId: number
  readonly accountId: number
  readonly email: string
  readonly tokenHash: string
}

export interface SignedIn {
  readonly token: string
  readonly expiresAt: Date
  readonly body: { readonly account: AccountRow; readonly user: { readonly email: string } }
}

export interface AccountsShape {
  readonly signup: (input: {
    readonly email: string
    readonly password: string
    readonly account_name: string
  }) => Effect.Effect<SignedIn, BadRequest | Conflict>
  readonly login: (input: { readonly email: string; readonly password: string }) => Effect.Effect<SignedIn, Unauthorized>
  readonly logout: (token: string) => Effect.Effect<void>
  /**
   * Changes the signed-in user's password, given the current one: every session of the user ends and
   * a new one replaces the current (its token is returned for the cookie), so a stolen cookie, this
   * one included, stops working.
   */
  readonly changePassword: (
    user: SessionUser,
    input: { readonly current_password: string; readonly new_password: string }
  ) => Effect.Effect<{ readonly token: string; readonly expiresAt: Date }, BadRequest | Unauthorized>
  /** Ends every session of the user, the current one included; the number ended. */
  readonly signOutEverywhere: (user: SessionUser) => Effect.Effect<number>
  readonly authenticateSession: (token: string) => Effect.Effect<SessionUser, Unauthorized>
  readonly me: (user: SessionUser) => Effect.Effect<{
    readonly account: AccountRow
    readonly user: { readonly email: string }
    readonly plan: Plan
    readonly usage: { brands: number; prompts: number; activeKeys: number; monthlyEvents: number; month: string }
  }, Unauthorized>
  /** The account's plan (other domains check their caps and entitlements against it). */
  readonly planOf: (accountId: number) => Effect.Effect<Plan>
  /** The account of the user with this email (operator commands name an account by its user). */
  readonly accountOfEmail: (email: string) => Effect.Effect<Option.Option<number>>
  /** Runs `effect` while holding the account's lock: plan caps stay exact under concurrent requests. */
  readonly withAccountLock: <A, E, R>(accountId: number, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class Accounts extends Context.Tag("Accounts")<Accounts, AccountsShape>() {}

const PASSWORD_MIN = 10
/** The longest password (UTF-8 bytes): hashing costs grow with it, and no person types more (docs/security.md). */
export const PASSWORD_MAX_BYTES = 1024
const byteLength = (text: string) => Buffer.byteLength(text, "utf8")
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** No address is longer (RFC 5321); a longer one is refused before any look-up. */
const EMAIL_MAX = 254
/** Accounts whose plan a process keeps in memory (a plan is a few hundred bytes); past it the cache starts over. */
const PLAN_CACHE_ENTRIES = 100_000
const NOT_SIGNED_IN = new Unauthorized({ error: "not signed in" })
const INVALID_CREDENTIALS = new Unauthorized({ error: "invalid credentials" })

export const AccountsLive = Layer.effect(
  Accounts,
  Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const hashing = yield* KeyHashing
    const passwords = yield* PasswordHasher
    const config = yield* AppConfig
    const invalidations = yield* Invalidations

    // Each account's plan, read by every drain delivery and batch: a change of an account's plan, or of
    // a plan's figures, notifies the invalidation channel at its commit, whoever makes it
    // (migrations/0016_account_cache_invalidation.sql). Inside a transaction (a cap checked under the
    // account's lock) the plan is read from the database, so a cap under the lock is exact.
    const plans = accountCache<Plan>(invalidations, PLAN_CACHE_ENTRIES)
    const planOf: AccountsShape["planOf"] = (accountId) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? repo.planOf(accountId) : plans.read(accountId, repo.planOf(accountId)))

    // Rows from before users.email_key with an address that is not ASCII get their key computed here,
    // the one way (src/platform/Email.ts); a no-op once done.
    yield* repo.fillEmailKeys

    /** The rules of a new password (sign-up and password change alike); the message when it breaks one. */
    const passwordProblem = (password: string): string | null => {
      if (password.length < PASSWORD_MIN) return `password must be at least ${PASSWORD_MIN} characters`
      if (password.trim() === "") return "password must not be only whitespace"
      if (byteLength(password) > PASSWORD_MAX_BYTES) return `password must be at most ${PASSWORD_MAX_BYTES} bytes`
      return null
    }

    const startSession = (account: AccountRow, userId: number, email: string) =>
      Effect.gen(function*() {
        const token = hashing.generateToken()
        const expiresAt = new Date((yield* now).getTime() + config.sessionDays * 86_400_000)
        yield* repo.createSession({ tokenHash: hashing.hash(token), accountId: account.id, userId, expiresAt })
        return { token, expiresAt, body: { account, user: { email } } }
      })

    const signup: AccountsShape["signup"] = (input) =>
      Effect.gen(function*() {
        // Stored in its canonical form: the one the sign-in look-up and its rate limit use.
        const email = canonicalEmail(input.email)
        const accountName = input.account_name.trim()
        if (!EMAIL.test(email) || email.length > EMAIL_MAX) return yield* Effect.fail(badRequest("invalid email"))
        const problem = passwordProblem(input.password)
        if (problem !== null) return yield* Effect.fail(badRequest(problem))
        if (accountName === "") return yield* Effect.fail(badRequest("account_name required"))
        const passwordHash = yield* passwords.hash(input.password)
        const created = yield* repo.createAccountWithUser({ accountName: accountName.slice(0, 200), email, passwordHash }).pipe(
          Effect.catchTag("EmailTaken", () => Effect.fail(conflict("email already registered")))
        )
        return yield* startSession(created.account, created.userId, email)
      })

    const login: AccountsShape["login"] = (input) =>
      Effect.gen(function*() {
        // No stored password is this long: refused before any hashing (an 8 MiB password is not hashed).
        if (byteLength(input.password) > PASSWORD_MAX_BYTES) return yield* Effect.fail(INVALID_CREDENTIALS)
        const email = canonicalEmail(input.email)
        const user = email.length > EMAIL_MAX ? Option.none() : yield* repo.findUserByEmail(email)
        if (Option.isNone(user)) {
          // Same work as a real check, so timing does not tell which emails exist.
          yield* passwords.verify(input.password, yield* passwords.dummyHash)
          return yield* Effect.fail(INVALID_CREDENTIALS)
        }
        const ok = yield* passwords.verify(input.password, user.value.passwordHash)
        if (!ok) return yield* Effect.fail(INVALID_CREDENTIALS)
        const account = yield* repo.account(user.value.accountId)
        if (Option.isNone(account)) return yield* Effect.fail(INVALID_CREDENTIALS)
        return yield* startSession(account.value, user.value.userId, user.value.email)
      })

    const authenticateSession: AccountsShape["authenticateSession"] = (token) =>
      Effect.gen(function*() {
        if (token === "") return yield* Effect.fail(NOT_SIGNED_IN)
        const tokenHash = hashing.hash(token)
        const session = yield* repo.findSession(tokenHash, yield* now)
        if (Option.isNone(session)) return yield* Effect.fail(NOT_SIGNED_IN)
        return { ...session.value, tokenHash }
      })

    const me: AccountsShape["me"] = (user) =>
      Effect.gen(function*() {
        const month = monthStart(yield* now)
        const [account, plan, usage] = yield* Effect.all([
          repo.account(user.accountId),
          planOf(user.accountId),
          repo.usage(user.accountId, month)
        ])
        if (Option.isNone(account)) return yield* Effect.fail(NOT_SIGNED_IN)
        return { account: account.value, user: { email: user.email }, plan, usage: { ...usage, month: month.slice(0, 7) } }
      })

    const changePassword: AccountsShape["changePassword"] = (user, input) =>
      Effect.gen(function*() {
        // Refused before any hashing, like a sign-in with an over-long password.
        if (byteLength(input.current_password) > PASSWORD_MAX_BYTES) {
          return yield* Effect.fail(badRequest("current password is not right"))
        }
        const problem = passwordProblem(input.new_password)
        if (problem !== null) return yield* Effect.fail(badRequest(problem.replace(/^password/, "new password")))
        const stored = yield* repo.findUser(user.userId)
        // The user is gone (deleted since the session was checked).
        if (Option.isNone(stored)) return yield* Effect.fail(NOT_SIGNED_IN)
        const ok = yield* passwords.verify(input.current_password, stored.value.passwordHash)
        if (!ok) return yield* Effect.fail(badRequest("current password is not right"))
        const passwordHash = yield* passwords.hash(input.new_password)
        const token = hashing.generateToken()
        const expiresAt = new Date((yield* now).getTime() + config.sessionDays * 86_400_000)
        yield* repo.changePassword({
          userId: user.userId,
          passwordHash,
          session: { tokenHash: hashing.hash(token), accountId: user.accountId, expiresAt }
        })
        return { token, expiresAt }
      })

    return {
      signup,
      login,
      logout: (token) => (token === "" ? Effect.void : repo.deleteSession(hashing.hash(token))),
      changePassword,
      signOutEverywhere: (user) => repo.deleteSessionsOfUser(user.userId),
      authenticateSession,
      me,
      planOf,
      accountOfEmail: (email) => repo.findUserByEmail(canonicalEmail(email)).pipe(Effect.map(Option.map((user) => user.accountId))),
      withAccountLock: repo.withAccountLock
    }
  })
).pipe(Layer.provide([KeyHashingLive, InvalidationsLive]))
