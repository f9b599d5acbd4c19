import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { countOf, firstRow, rows } from "../platform/Rows.js"

export const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.Number,
  name: Schema.String,
  keyHash: Schema.String,
  prefix: Schema.String,
  createdAt: Schema.DateFromSelf,
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
})
export type ApiKeyRow = typeof ApiKeyRow.Type

/** What authentication needs of a key, looked up by the SHA-256 of the presented token. */
export const KeyLookup = Schema.Struct({
  id: Schema.String,
  accountId: Schema.Number,
  revoked: Schema.Boolean,
  /** last_used_at is set: the key has been used (by any process) before. */
  used: Schema.Boolean
})
export type KeyLookup = typeof KeyLookup.Type

/**
 * The account's plan and, when it has more active keys than the plan allows (after a downgrade), the
 * keys beyond the cap: the oldest active keys up to the cap keep working, these do not.
 */
export const KeysOverCap = Schema.Struct({
  plan: Schema.String,
  maxKeys: Schema.Number,
  ids: Schema.Array(Schema.String)
})
export type KeysOverCap = typeof KeysOverCap.Type

const OverCapRow = Schema.Struct({ plan: Schema.String, maxKeys: Schema.Number, id: Schema.NullOr(Schema.String) })

export interface ApiKeysRepoShape {
  readonly list: (accountId: number) => Effect.Effect<ReadonlyArray<ApiKeyRow>>
  readonly countActive: (accountId: number) => Effect.Effect<number>
  readonly insert: (row: ApiKeyRow) => Effect.Effect<void>
  /** Sets revoked_at once (a second revoke keeps the first date); None when the key is not the account's. */
  readonly revoke: (accountId: number, id: string, now: Date) => Effect.Effect<Option.Option<ApiKeyRow>>
  readonly findByHash: (keyHash: string) => Effect.Effect<Option.Option<KeyLookup>>
  /** Active keys beyond the plan's cap, oldest first (created_at, then id); None for an unknown account. */
  readonly overCap: (accountId: number) => Effect.Effect<Option.Option<KeysOverCap>>
  /** Writes last-used times collected in memory (never moves a time backwards). */
  readonly touch: (entries: ReadonlyArray<{ readonly id: string; readonly at: Date }>) => Effect.Effect<void>
}

export class ApiKeysRepo extends Context.Tag("ApiKeysRepo")<ApiKeysRepo, ApiKeysRepoShape>() {}

const columns = `id::text as id, account_id::int as "accountId", name, key_hash as "keyHash", prefix,
  created_at as "createdAt", last_used_at as "lastUsedAt", revoked_at as "revokedAt"`

export const ApiKeysRepoLive = Layer.effect(
  ApiKeysRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    return {
      list: (accountId) =>
        sql`select ${cols} from api_keys where account_id = ${accountId} order by created_at, id`.pipe(rows(ApiKeyRow), Effect.orDie),
      countActive: (accountId) =>
        sql`select count(*)::int as n from api_keys where account_id = ${accountId} and revoked_at is null`.pipe(countOf, Effect.orDie),
      insert: (row) =>
        sql`insert into api_keys (id, account_id, name, key_hash, prefix, created_at)
            values (${row.id}, ${row.accountId}, ${row.name}, ${row.keyHash}, ${row.prefix}, ${row.createdAt})`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      revoke: (accountId, id, now) =>
        sql`
          update api_keys set revoked_at = coalesce(revoked_at, ${now})
          where id = ${id} and account_id = ${accountId}
          returning ${cols}`.pipe(firstRow(ApiKeyRow), Effect.orDie),
      findByHash: (keyHash) =>
        sql`
          select id::text as id, account_id::int as "accountId", revoked_at is not null as revoked,
            last_used_at is not null as used
          from api_keys where key_hash = ${keyHash}`.pipe(firstRow(KeyLookup), Effect.orDie),
      overCap: (accountId) =>
        sql`
          select p.id as plan, p.max_keys::int as "maxKeys", k.id
          from accounts a
          join plans p on p.id = a.plan_id
          left join (
            select id::text as id, row_number() over (order by created_at, id) as n
            from api_keys where account_id = ${accountId} and revoked_at is null
          ) k on k.n > p.max_keys
          where a.id = ${accountId}
          order by k.n`.pipe(
          rows(OverCapRow),
          Effect.map((found) => {
            const first = found[0]
            if (first === undefined) return Option.none()
            return Option.some({
              plan: first.plan,
              maxKeys: first.maxKeys,
              ids: found.flatMap((row) => (row.id === null ? [] : [row.id]))
            })
          }),
          Effect.orDie
        ),
      touch: (entries) =>
        entries.length === 0
          ? Effect.void
          : sql`
              update api_keys k set last_used_at = greatest(k.last_used_at, v.at)
              from (select unnest(${entries.map((e) => e.id)}::uuid[]) as id,
                           unnest(${entries.map((e) => e.at.toISOString())}::timestamptz[]) as at) v
              where k.id = v.id`.pipe(Effect.asVoid, Effect.orDie)
    }
  })
)
