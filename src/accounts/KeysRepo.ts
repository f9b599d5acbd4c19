import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"

export interface ApiKeyRow {
  readonly id: string
  readonly accountId: number
  readonly name: string
  readonly keyHash: string
  readonly prefix: string
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
  readonly revokedAt: Date | null
}

/** What authentication needs of a key, looked up by the SHA-256 of the presented token. */
export interface KeyLookup {
  readonly id: string
  readonly accountId: number
  readonly revoked: boolean
  /** last_used_at is set: the key has been used (by any process) before. */
  readonly used: boolean
}

export interface ApiKeysRepoShape {
  readonly list: (accountId: number) => Effect.Effect<ReadonlyArray<ApiKeyRow>>
  readonly countActive: (accountId: number) => Effect.Effect<number>
  readonly insert: (row: ApiKeyRow) => Effect.Effect<void>
  /** Sets revoked_at once (a second revoke keeps the first date); None when the key is not the account's. */
  readonly revoke: (accountId: number, id: string, now: Date) => Effect.Effect<Option.Option<ApiKeyRow>>
  readonly findByHash: (keyHash: string) => Effect.Effect<Option.Option<KeyLookup>>
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
        sql<ApiKeyRow>`select ${cols} from api_keys where account_id = ${accountId} order by created_at, id`.pipe(Effect.orDie),
      countActive: (accountId) =>
        sql<{ n: number }>`select count(*)::int as n from api_keys where account_id = ${accountId} and revoked_at is null`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
      insert: (row) =>
        sql`insert into api_keys (id, account_id, name, key_hash, prefix, created_at)
            values (${row.id}, ${row.accountId}, ${row.name}, ${row.keyHash}, ${row.prefix}, ${row.createdAt})`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      revoke: (accountId, id, now) =>
        sql<ApiKeyRow>`
          update api_keys set revoked_at = coalesce(revoked_at, ${now})
          where id = ${id} and account_id = ${accountId}
          returning ${cols}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie),
      findByHash: (keyHash) =>
        sql<KeyLookup>`
          select id::text as id, account_id::int as "accountId", revoked_at is not null as revoked,
            last_used_at is not null as used
          from api_keys where key_hash = ${keyHash}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie),
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
