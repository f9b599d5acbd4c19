import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Schedule, Stream } from "effect"
import { AppConfig } from "../platform/Config.js"
import { badRequest, notFound, PlanLimitReached, type BadRequest, type NotFound, Unauthorized } from "../platform/HttpErrors.js"
import { Database } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepo, type ApiKeyRow, type KeyLookup } from "./KeysRepo.js"
import { displayPrefix, KEY_PREFIX, KeyHashing } from "./KeyHashing.js"
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
  /** The whole bearer check of docs/decisions.md "Authentication", from the raw Authorization header. */
  readonly authenticate: (
    authorization: string | undefined
  ) => Effect.Effect<{ readonly accountId: number; readonly keyId: string }, Unauthorized>
  /** Writes pending last-used times now (also done on a schedule and at shutdown). */
  readonly flushLastUsed: Effect.Effect<void>
}

export class ApiKeys extends Context.Tag("ApiKeys")<ApiKeys, ApiKeysShape>() {}

export const REVOCATION_CHANNEL = "aiv_api_key_revoked"
/** Besides key hashes, the channel carries each process's probe of its own LISTEN and revoke acks. */
const PROBE_PREFIX = "probe:"
const ACK_PREFIX = "ack:"
const NAME_MAX = 80
const CACHE_MAX = 100_000
/** How long a revoke waits for the other server processes to confirm they dropped the key. */
const ACK_WAIT = Duration.seconds(2)

const MISSING = new Unauthorized({ error: "missing Authorization header" })
const NOT_BEARER = new Unauthorized({ error: "Authorization must be Bearer <token>" })
const EMPTY = new Unauthorized({ error: "empty bearer token" })
const INVALID = new Unauthorized({ error: "invalid API key" })

/**
 * Keys by hash, kept in process so the bearer check costs no query on the hot path.
 * A revoke deletes the entry at once here and, through NOTIFY, in every other server
 * process; unknown hashes are cached too (a key cannot be guessed before it exists).
 */
const makeKeyCache = () => {
  const entries = new Map<string, KeyLookup | null>()
  // Bumped by every invalidation: a database read that began before one may be older than it,
  // so its answer is not cached (else a revoke landing during the read would be undone).
  let generation = 0
  return {
    get: (hash: string) => entries.get(hash),
    generation: () => generation,
    /** Caches `value` unless an invalidation happened since `readAt` (a generation()). */
    set: (hash: string, value: KeyLookup | null, readAt: number) => {
      if (readAt !== generation) return
      if (entries.size >= CACHE_MAX) entries.clear()
      entries.set(hash, value)
    },
    /** The cached key has a last use in the database now. */
    markUsed: (hash: string) => {
      const entry = entries.get(hash)
      if (entry) entries.set(hash, { ...entry, used: true })
    },
    delete: (hash: string) => {
      generation++
      entries.delete(hash)
    },
    clear: () => {
      generation++
      entries.clear()
    }
  }
}

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
    const database = yield* Database
    const cache = makeKeyCache()
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

    // Other processes' revokes. The cache is trusted only while the LISTEN is known to be live:
    // after each (re)subscription a probe of our own must come back through it, and only then is
    // the cache cleared (dropping whatever was cached while deaf) and filled again. Until then
    // every bearer check reads the database, so a missed notification cannot keep a revoked key.
    const probe = `${PROBE_PREFIX}${crypto.randomUUID()}`
    let listening = false
    const heard = yield* Deferred.make<void>()
    /** Revokes of this process waiting for the other processes to confirm (key hash -> waiters). */
    const awaitingAcks = new Map<string, Array<{ readonly pending: Set<string>; readonly done: Deferred.Deferred<void> }>>()
    yield* database.listen(REVOCATION_CHANNEL).pipe(
      Stream.runForEach((payload) => {
        if (payload === probe) {
          if (!listening) cache.clear()
          listening = true
          Deferred.unsafeDone(heard, Exit.void)
          return Effect.void
        }
        if (payload.startsWith(ACK_PREFIX)) {
          // "ack:<instance>:<key hash>": that process has dropped the key from its cache.
          const rest = payload.slice(ACK_PREFIX.length)
          const colon = rest.indexOf(":")
          const from = rest.slice(0, colon)
          for (const waiter of awaitingAcks.get(rest.slice(colon + 1)) ?? []) {
            waiter.pending.delete(from)
            if (waiter.pending.size === 0) Deferred.unsafeDone(waiter.done, Exit.void)
          }
          return Effect.void
        }
        // Another process's probe.
        if (payload.startsWith(PROBE_PREFIX)) return Effect.void
        cache.delete(payload)
        // Tell the revoking process this one will not answer from its cache any more.
        return database.notify(REVOCATION_CHANNEL, `${ACK_PREFIX}${database.instanceId}:${payload}`).pipe(
          Effect.catchAllCause(() => Effect.void),
          Effect.forkDaemon,
          Effect.asVoid
        )
      }),
      Effect.zipLeft(Effect.fail("listen ended")),
      Effect.onExit(() => Effect.sync(() => (listening = false))),
      Effect.retry(Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))),
      Effect.catchAllCause(Effect.logWarning),
      Effect.forkScoped
    )
    // Sends the probe while not (yet, or no longer) listening.
    yield* Effect.suspend(() => (listening ? Effect.void : database.notify(REVOCATION_CHANNEL, probe))).pipe(
      Effect.catchAllCause(() => Effect.void),
      Effect.repeat(Schedule.spaced(Duration.millis(100))),
      Effect.forkScoped
    )
    // Serve once listening (or after 5 s without: checks then read the database until it is).
    yield* Deferred.await(heard).pipe(Effect.timeout(Duration.seconds(5)), Effect.ignore)

    const lookup = (hash: string) => {
      const cached = cache.get(hash)
      if (cached !== undefined) return Effect.succeed(cached)
      const readAt = cache.generation()
      return Effect.map(repo.findByHash(hash), (found) => {
        const value = Option.getOrNull(found)
        if (listening) cache.set(hash, value, readAt)
        return value
      })
    }

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
      return Effect.flatMap(lookup(hash), (key) => {
        if (key === null || key.revoked) return Effect.fail(INVALID)
        const at = new Date()
        pendingLastUsed.set(key.id, at)
        const current = { accountId: key.accountId, keyId: key.id }
        if (key.used) return Effect.succeed(current)
        // A key's first use is written at once (later ones in batches): the key list of every
        // server process, not only this one's pending times, shows that it has been used.
        return repo.touch([{ id: key.id, at }]).pipe(
          Effect.exit,
          Effect.map((written) => {
            if (Exit.isSuccess(written)) cache.markUsed(hash)
            return current
          })
        )
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
        cache.delete(row.keyHash)
        // Effective on the next request in every process: the revoke answers once each other live
        // process has dropped the key (its ack), or after ACK_WAIT (a process whose LISTEN is down
        // does not trust its cache anyway, and reads the database).
        const peers = yield* database.peers(REVOCATION_CHANNEL).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
        // Registered before the notification goes out, so no ack can come first.
        const waiter = peers.length === 0 ? undefined : { pending: new Set(peers), done: yield* Deferred.make<void>() }
        if (waiter !== undefined) awaitingAcks.set(row.keyHash, [...(awaitingAcks.get(row.keyHash) ?? []), waiter])
        yield* database.notify(REVOCATION_CHANNEL, row.keyHash).pipe(
          Effect.catchAllCause(Effect.logWarning)
        )
        if (waiter !== undefined) {
          yield* Deferred.await(waiter.done).pipe(
            Effect.timeout(ACK_WAIT),
            Effect.catchAll(() => Effect.logWarning(`revoke: no confirmation from ${waiter.pending.size} server process(es)`)),
            Effect.ensuring(Effect.sync(() => {
              const left = (awaitingAcks.get(row.keyHash) ?? []).filter((w) => w !== waiter)
              if (left.length === 0) awaitingAcks.delete(row.keyHash)
              else awaitingAcks.set(row.keyHash, left)
            }))
          )
        }
        return view(row, pendingLastUsed.get(row.id))
      })

    return { list, create, revoke, authenticate, flushLastUsed }
  })
)
