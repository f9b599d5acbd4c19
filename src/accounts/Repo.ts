import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { canonicalEmail } from "../platform/Email.js"
import { firstRow, rows, singleRow } from "../platform/Rows.js"
import { isUniqueViolation } from "../platform/SqlErrors.js"
import type { Plan } from "./Plans.js"

export const AccountRow = Schema.Struct({ id: Schema.Number, name: Schema.String, plan: Schema.String })
export type AccountRow = typeof AccountRow.Type

export const UserRow = Schema.Struct({
  userId: Schema.Number,
  accountId: Schema.Number,
  email: Schema.String,
  passwordHash: Schema.String
})
export type UserRow = typeof UserRow.Type

export const SessionRow = Schema.Struct({ userId: Schema.Number, accountId: Schema.Number, email: Schema.String })
export type SessionRow = typeof SessionRow.Type

export const Usage = Schema.Struct({
  brands: Schema.Number,
  prompts: Schema.Number,
  activeKeys: Schema.Number,
  monthlyEvents: Schema.Number
})
export type Usage = typeof Usage.Type

const IdRow = Schema.Struct({ id: Schema.Number })
const UserEmailRow = Schema.Struct({ id: Schema.Number, email: Schema.String })

export class EmailTaken extends Schema.TaggedError<EmailTaken>()("EmailTaken", {}) {}

/**
 * Accounts, users, sessions and plans. Infrastructure failures (SqlError) are defects
 * here: the HTTP edge answers them with 503, and they are never a client's fault.
 */
export interface AccountsRepoShape {
  readonly createAccountWithUser: (input: {
    readonly accountName: string
    readonly email: string
    readonly passwordHash: string
  }) => Effect.Effect<{ readonly account: AccountRow; readonly userId: number }, EmailTaken>
  /** By the canonical form of the address (src/platform/Email.ts), compared exactly with users.email_key. */
  readonly findUserByEmail: (email: string) => Effect.Effect<Option.Option<UserRow>>
  readonly findUser: (userId: number) => Effect.Effect<Option.Option<UserRow>>
  /**
   * Sets the user's password hash and replaces every session of the user by the one given, in one
   * transaction: no other session survives a password change.
   */
  readonly changePassword: (input: {
    readonly userId: number
    readonly passwordHash: string
    readonly session: { readonly tokenHash: string; readonly accountId: number; readonly expiresAt: Date }
  }) => Effect.Effect<void>
  /** Ends every session of the user; the number ended. */
  readonly deleteSessionsOfUser: (userId: number) => Effect.Effect<number>
  /** Writes users.email_key where it is missing (rows older than it with a non-ASCII address); the rows written. */
  readonly fillEmailKeys: Effect.Effect<number>
  readonly createSession: (input: {
    readonly tokenHash: string
    readonly accountId: number
    readonly userId: number
    readonly expiresAt: Date
  }) => Effect.Effect<void>
  readonly findSession: (tokenHash: string, now: Date) => Effect.Effect<Option.Option<SessionRow>>
  readonly deleteSession: (tokenHash: string) => Effect.Effect<void>
  readonly account: (accountId: number) => Effect.Effect<Option.Option<AccountRow>>
  readonly planOf: (accountId: number) => Effect.Effect<Plan>
  readonly usage: (accountId: number, month: string) => Effect.Effect<Usage>
  /** Moves the account of the user with this email to a plan; None when no such user. */
  readonly setPlanByEmail: (email: string, planId: string) => Effect.Effect<Option.Option<AccountRow>>
  /** Runs `effect` while holding the account's row lock: plan caps stay exact under concurrent requests. */
  readonly withAccountLock: <A, E, R>(accountId: number, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class AccountsRepo extends Context.Tag("AccountsRepo")<AccountsRepo, AccountsRepoShape>() {}

/** A row of `plans` as stored (migrations/0001_init.sql). */
const PlanDbRow = Schema.Struct({
  id: Schema.String,
  paid: Schema.Boolean,
  max_keys: Schema.Number,
  max_brands: Schema.Number,
  max_prompts: Schema.Number,
  batch_ingest: Schema.Boolean,
  drain_ingest: Schema.Boolean,
  monthly_events: Schema.Number,
  scan_hours: Schema.Number
})

export const planFromRow = (row: typeof PlanDbRow.Type): Plan => ({
  id: row.id,
  paid: row.paid,
  maxKeys: row.max_keys,
  maxBrands: row.max_brands,
  maxPrompts: row.max_prompts,
  batchIngest: row.batch_ingest,
  drainIngest: row.drain_ingest,
  monthlyEvents: row.monthly_events,
  scanHours: row.scan_hours
})

export const AccountsRepoLive = Layer.effect(
  AccountsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const createAccountWithUser: AccountsRepoShape["createAccountWithUser"] = (input) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const key = canonicalEmail(input.email)
          const taken = yield* sql`select id from users where email_key = ${key}`
          if (taken.length > 0) return yield* Effect.fail(new EmailTaken())
          const account = yield* sql`
            insert into accounts (name) values (${input.accountName})
            returning id::int as id, name, plan_id as plan`.pipe(singleRow(AccountRow))
          const user = yield* sql`
            insert into users (account_id, email, email_key, password_hash)
            values (${account.id}, ${input.email}, ${key}, ${input.passwordHash})
            returning id::int as id`.pipe(singleRow(IdRow))
          return { account, userId: user.id }
        })
      ).pipe(
        // A concurrent sign-up with the same email loses on the unique index.
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error.cause) ? Effect.fail(new EmailTaken()) : Effect.die(error)
        )
      )

    const findUserByEmail: AccountsRepoShape["findUserByEmail"] = (email) =>
      sql`
        select id::int as "userId", account_id::int as "accountId", email, password_hash as "passwordHash"
        from users where email_key = ${canonicalEmail(email)}`.pipe(firstRow(UserRow), Effect.orDie)

    const findUser: AccountsRepoShape["findUser"] = (userId) =>
      sql`
        select id::int as "userId", account_id::int as "accountId", email, password_hash as "passwordHash"
        from users where id = ${userId}`.pipe(firstRow(UserRow), Effect.orDie)

    const changePassword: AccountsRepoShape["changePassword"] = (input) =>
      sql.withTransaction(
        Effect.all([
          sql`update users set password_hash = ${input.passwordHash} where id = ${input.userId}`,
          sql`delete from sessions where user_id = ${input.userId}`,
          sql`insert into sessions (token_hash, account_id, user_id, expires_at)
              values (${input.session.tokenHash}, ${input.session.accountId}, ${input.userId}, ${input.session.expiresAt})`
        ], { discard: true })
      ).pipe(Effect.orDie)

    const deleteSessionsOfUser: AccountsRepoShape["deleteSessionsOfUser"] = (userId) =>
      sql`delete from sessions where user_id = ${userId} returning user_id::int as id`.pipe(
        rows(IdRow),
        Effect.map((ended) => ended.length),
        Effect.orDie
      )

    const fillEmailKeys: AccountsRepoShape["fillEmailKeys"] = Effect.gen(function*() {
      const missing = yield* sql`select id::int as id, email from users where email_key is null order by id`.pipe(rows(UserEmailRow))
      let written = 0
      for (const user of missing) {
        // Two old addresses with one canonical form: the first keeps it, the other is left without a key
        // (it cannot sign in until an operator settles it) rather than merged into another account.
        const done = yield* sql`update users set email_key = ${canonicalEmail(user.email)} where id = ${user.id} and email_key is null`.pipe(
          Effect.as(1),
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error.cause)
              ? Effect.as(Effect.logWarning(`user ${user.id}: another user has the same canonical email; not signed in by email`), 0)
              : Effect.die(error))
        )
        written += done
      }
      return written
    }).pipe(Effect.orDie)

    const createSession: AccountsRepoShape["createSession"] = (input) =>
      sql`insert into sessions (token_hash, account_id, user_id, expires_at)
          values (${input.tokenHash}, ${input.accountId}, ${input.userId}, ${input.expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    const findSession: AccountsRepoShape["findSession"] = (tokenHash, now) =>
      sql`
        select s.user_id::int as "userId", s.account_id::int as "accountId", u.email
        from sessions s join users u on u.id = s.user_id
        where s.token_hash = ${tokenHash} and s.expires_at > ${now}`.pipe(firstRow(SessionRow), Effect.orDie)

    const deleteSession: AccountsRepoShape["deleteSession"] = (tokenHash) =>
      sql`delete from sessions where token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

    const account: AccountsRepoShape["account"] = (accountId) =>
      sql`select id::int as id, name, plan_id as plan from accounts where id = ${accountId}`.pipe(firstRow(AccountRow), Effect.orDie)

    const planOf: AccountsRepoShape["planOf"] = (accountId) =>
      sql`select p.* from accounts a join plans p on p.id = a.plan_id where a.id = ${accountId}`.pipe(
        firstRow(PlanDbRow),
        Effect.flatMap(Option.match({
          onNone: () => Effect.dieMessage(`account ${accountId} has no plan`),
          onSome: (row) => Effect.succeed(planFromRow(row))
        })),
        Effect.orDie
      )

    const usage: AccountsRepoShape["usage"] = (accountId, month) =>
      sql`
        select
          (select count(*)::int from brands where account_id = ${accountId}) as brands,
          (select count(*)::int from prompts where account_id = ${accountId}) as prompts,
          (select count(*)::int from api_keys where account_id = ${accountId} and revoked_at is null) as "activeKeys",
          coalesce((select events::int from monthly_usage where account_id = ${accountId} and month = ${month}::date), 0) as "monthlyEvents"`.pipe(
        singleRow(Usage),
        Effect.orDie
      )

    const setPlanByEmail: AccountsRepoShape["setPlanByEmail"] = (email, planId) =>
      sql`
        update accounts set plan_id = ${planId}
        where id = (select account_id from users where email_key = ${canonicalEmail(email)})
        returning id::int as id, name, plan_id as plan`.pipe(firstRow(AccountRow), Effect.orDie)

    const withAccountLock: AccountsRepoShape["withAccountLock"] = (accountId, effect) =>
      sql.withTransaction(
        Effect.zipRight(sql`select id from accounts where id = ${accountId} for update`.pipe(Effect.orDie), effect)
      ).pipe(Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die))

    return {
      createAccountWithUser,
      findUserByEmail,
      findUser,
      changePassword,
      deleteSessionsOfUser,
      fillEmailKeys,
      createSession,
      findSession,
      deleteSession,
      account,
      planOf,
      usage,
      setPlanByEmail,
      withAccountLock
    }
  })
)
