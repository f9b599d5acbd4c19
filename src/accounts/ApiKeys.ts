import { Context, Duration, Effect, Exit, Layer, Option, Schedule } from "effect"
import { AppConfig } from "../platform/Config.js"
import {
  badRequest,
  Forbidden,
  notFound,
  PlanLimitReached,
  type BadRequest,
  type NotFound,
  Unauthorized
} from "../platform/HttpErrors.js"
import { accountCache, channelCache, Invalidations, InvalidationsLive } from "../platform/Invalidations.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepo, type ApiKeyRow, type KeyLookup, type KeysOverCap } from "./KeysRepo.js"
import { displayPrefix, KEY_PREFIX, KeyHashing, KeyHashingLive } from "./KeyHashing.js"
import { AccountsRepo } from "./Repo.js"

export interface ApiKeyView {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

export interface ApiKeysShape {
  readonly list: (accountId: number) => Effect.Effect<{ keys: ReadonlyArray<ApiKeyView>; count: number; limit: number }>
  readonly create: (
    accountId: number,
    name: string | null | undefined
  ) => Effect.Effect<
    { id: string; name: string; key: string; prefix: string; created_at: Date },
    BadRequest | PlanLimitReached
  >
  readonly revoke: (accountId: number, id: string) => Effect.Effect<ApiKeyView, NotFound>
  /**
   * The whole bearer check of docs/decisions.md "Authentication", from the raw Authorization header;
   * 403 for a key beyond its plan's cap (docs/security.md "Plan downgrades").
   */
  readonly authenticate: (
    authorization: string | undefined
  ) => Effect.Effect<{ readonly accountId: number; readonly keyId: string }, Unauthorized | Forbidden>
  /** Writes pending last-used times now (also done on a schedule and at shutdown). */
  readonly flushLastUsed: Effect.Effect<void>
}

export class ApiKeys extends Context.Tag("ApiKeys")<ApiKeys, ApiKeysShape>() {}

const NAME_MAX = 80

/**
 * Approximate bytes of one cached key: its hash (the map key, 64 hex characters), the map entry and
 * the lookup (a UUID and three fields) or null for an unknown hash. The cache is bounded by the sum
 * (API_KEY_CACHE_BYTES).
 */
export const cachedKeyBytes = (lookup: KeyLookup | null): number => 256 + (lookup === null ? 0 : 160)

const MISSING = new Unauthorized({ error: "missing Authorization header" })
const NOT_BEARER = new Unauthorized({ error: "Authorization must be Bearer <token>" })
const EMPTY = new Unauthorized({ error: "empty bearer token" })
const INVALID = new Unauthorized({ error: "invalid API key" })

/** Nothing over the cap (the common case, and an account that is gone: its keys are gone with it). */
const NONE_OVER: KeysOverCap = { plan: "", maxKeys: 0, ids: [] }

interface OverCap {
  readonly plan: string
  readonly maxKeys: number
  readonly ids: ReadonlySet<string>
}

/** The 403 of a key the plan's cap leaves out: it names the plan and what to do. */
const overCapError = (over: OverCap) =>
  new Forbidden({
    error: `API key over the ${over.plan} plan's limit of ${over.maxKeys} active API key${over.maxKeys === 1 ? "" : "s"}: ` +
      "only the oldest keys up to the limit work. Revoke keys to fit, or upgrade the plan."
  })

const view = (row: ApiKeyRow, pendingLastUsed: Date | undefined): ApiKeyView => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  created_at: row.createdAt,
  last_used_at:
    pendingLastUsed && (!row.lastUsedAt || pendingLastUsed > row.lastUsedAt) ? pendingLastUsed : row.lastUsedAt,
  revoked_at: row.revokedAt
})

export const ApiKeysLive = Layer.scoped(
  ApiKeys,
  Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
    const accounts = yield* AccountsRepo
    const hashing = yield* KeyHashing
    const config = yield* AppConfig
    const invalidations = yield* Invalidations
    // Keys by hash, kept in process so the bearer check costs no query on the hot path. A revoke
    // drops the entry at once here and, through the invalidation channel, in every other process
    // (its payload is the bare hash, "*" every key). Unknown hashes are cached too (a key cannot be guessed before
    // it exists).
    const cache = channelCache<string, KeyLookup | null>(invalidations, {
      prefix: "",
      key: (hash) => hash,
      maxWeight: config.cacheBytes.apiKeys,
      weightOf: cachedKeyBytes
    })
    // Per account, the active keys beyond its plan's cap (an empty set but after a downgrade). Dropped by
    // `account:<id>` on the channel, which the triggers send when the plan, the plans or the account's
    // keys change (migrations 0016 and 0018), whoever changes them: a plan change applies at once in
    // every process. A new key never needs it dropped: it is created only under the cap.
    // Weighed in approximate bytes like the keys, within the same budget: an entry and a key id each.
    const overCaps = accountCache<OverCap>(invalidations, config.cacheBytes.apiKeys, (over) => 256 + 96 * over.ids.size)
    const overCapOf = (accountId: number) =>
      overCaps.read(
        accountId,
        Effect.map(repo.overCap(accountId), (found) => {
          const over = Option.getOrElse(found, () => NONE_OVER)
          return { plan: over.plan, maxKeys: over.maxKeys, ids: new Set(over.ids) }
        })
      )
    /** key id -> last use not yet written: at most one write per key per flush interval. */
    const pendingLastUsed = new Map<string, Date>()

    const flushLastUsed = Effect.suspend(() => {
      if (pendingLastUsed.size === 0) return Effect.void
      const entries = Array.from(pendingLastUsed, ([id, at]) => ({ id, at }))
      pendingLastUsed.clear()
      return repo.touch(entries)
    })

    yield* flushLastUsed.pipe(
      Effect.catchAllCause(Effect.logWarning),
      Effect.repeat(Schedule.spaced(Duration.seconds(config.lastUsedFlushSeconds))),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => flushLastUsed.pipe(Effect.catchAllCause(Effect.logWarning)))

    const lookup = (hash: string) => cache.read(hash, Effect.map(repo.findByHash(hash), Option.getOrNull))

    /** A valid key within its plan's cap: its use is noted. */
    const accepted = (hash: string, key: KeyLookup): Effect.Effect<{ readonly accountId: number; readonly keyId: string }> =>
      Effect.flatMap(now, (at) => {
        pendingLastUsed.set(key.id, at)
        const current = { accountId: key.accountId, keyId: key.id }
        if (key.used) return Effect.succeed(current)
        // A key's first use is written at once (later ones in batches): the key list of every
        // server process, not only this one's pending times, shows that it has been used.
        return repo.touch([{ id: key.id, at }]).pipe(
          Effect.exit,
          Effect.map((written) => {
            if (Exit.isSuccess(written)) cache.update(hash, (entry) => entry && { ...entry, used: true })
            return current
          })
        )
      })

    const authenticate: ApiKeysShape["authenticate"] = (authorization) => {
      if (authorization === undefined) return Effect.fail(MISSING)
      const header = authorization.trim()
      if (header === "") return Effect.fail(MISSING)
      const space = header.indexOf(" ")
      const scheme = space === -1 ? header : header.slice(0, space)
      if (scheme.toLowerCase() !== "bearer") return Effect.fail(NOT_BEARER)
      const token = space === -1 ? "" : header.slice(space + 1).trim()
      if (token === "") return Effect.fail(EMPTY)
      if (!token.startsWith(KEY_PREFIX)) return Effect.fail(INVALID)
      const hash = hashing.hash(token)
      return Effect.flatMap(lookup(hash), (key): Effect.Effect<{ readonly accountId: number; readonly keyId: string }, Unauthorized | Forbidden> => {
        if (key === null || key.revoked) return Effect.fail(INVALID)
        return Effect.flatMap(overCapOf(key.accountId), (over) =>
          over.ids.has(key.id) ? Effect.fail(overCapError(over)) : accepted(hash, key))
      })
    }

    const list: ApiKeysShape["list"] = (accountId) =>
      Effect.all([repo.list(accountId), accounts.planOf(accountId)]).pipe(
        Effect.map(([rows, plan]) => ({
          keys: rows.map((row) => view(row, pendingLastUsed.get(row.id))),
          count: rows.length,
          limit: plan.maxKeys
        }))
      )

    const create: ApiKeysShape["create"] = (accountId, rawName) =>
      Effect.gen(function*() {
        const name = (rawName ?? "").trim().slice(0, NAME_MAX)
        if (name === "") return yield* Effect.fail(badRequest("name required"))
        return yield* accounts.withAccountLock(
          accountId,
          Effect.gen(function*() {
            const [plan, active] = yield* Effect.all([accounts.planOf(accountId), repo.countActive(accountId)])
            if (active >= plan.maxKeys) {
              return yield* Effect.fail(
                new PlanLimitReached({
                  error: "plan_limit_reached",
                  plan: plan.id,
                  count: active,
                  limit: plan.maxKeys,
                  hint: `The ${plan.id} plan allows ${plan.maxKeys} active API key${plan.maxKeys === 1 ? "" : "s"}. ` +
                    "Revoke a key you no longer use, or upgrade your plan."
                })
              )
            }
            const key = hashing.generateKey()
            const row: ApiKeyRow = {
              id: crypto.randomUUID(),
              accountId,
              name,
              keyHash: hashing.hash(key),
              prefix: displayPrefix(key),
              createdAt: yield* now,
              lastUsedAt: null,
              revokedAt: null
            }
            yield* repo.insert(row)
            return { id: row.id, name: row.name, key, prefix: row.prefix, created_at: row.createdAt }
          })
        )
      })

    const revoke: ApiKeysShape["revoke"] = (accountId, id) =>
      Effect.gen(function*() {
        const row = yield* repo.revoke(accountId, id, yield* now).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound("api key not found")), onSome: Effect.succeed }))
        )
        cache.drop(row.keyHash)
        // A revoke may bring the account back under its cap (the trigger tells the other processes).
        overCaps.drop(accountId)
        // Effective on the next request in every process: the revoke answers once each other live
        // process has dropped the key.
        yield* invalidations.publish(row.keyHash)
        return view(row, pendingLastUsed.get(row.id))
      })

    return { list, create, revoke, authenticate, flushLastUsed }
  })
).pipe(Layer.provide([KeyHashingLive, InvalidationsLive]))
