import { Cause, Context, Deferred, Duration, Effect, Exit, Layer, Schedule, Stream } from "effect"
import { Database, Listening } from "./Sql.js"

/**
 * Cross-process invalidation of in-process caches, through PostgreSQL LISTEN/NOTIFY on one channel
 * (docs/decisions.md "Authentication" and "Brands, competitors, prompts"; docs/performance.md
 * "Account data in memory, and a precomputed route").
 *
 * A cache is trusted only while the LISTEN is known to be live: after each (re)subscription a probe
 * of this process must come back through it, and only then are the caches told to drop everything
 * (whatever they held while deaf) and may fill again. Until then they read the database, so a missed
 * notification cannot keep a stale entry.
 *
 * Each process that receives a payload acts on it (every cache's handler), then confirms it
 * (`ack:<instance>:<payload>`), so a change can wait until every other live process has acted on it.
 * PostgreSQL delivers the notifications of a channel in commit order: a process that confirms a
 * payload has acted on every payload committed before it (what `barrier` relies on).
 */

/**
 * Named for its first use, the API key revocations; the name stays so that processes of the
 * previous release still hear revokes (and confirm them) during a rolling deploy.
 */
export const INVALIDATION_CHANNEL = "aiv_api_key_revoked"
const PROBE_PREFIX = "probe:"
const ACK_PREFIX = "ack:"
const SYNC_PREFIX = "sync:"
/** How long a change waits for the other server processes to confirm. */
const ACK_WAIT = Duration.seconds(2)

export interface InvalidationHandler {
  /**
   * The payloads this handler takes: those starting with `prefix` (and handed on without it); the
   * empty prefix takes those no other handler's prefix matches (the API keys' bare hashes).
   */
  readonly prefix: string
  /** A payload from any process (this one too), in commit order. */
  readonly onPayload: (payload: string) => void
  /** The LISTEN is live again after being down or new: drop everything cached. */
  readonly onLive: () => void
}

export interface InvalidationsShape {
  /** True while the LISTEN is known live: a read from the database may be cached only then. */
  readonly live: () => boolean
  readonly register: (handler: InvalidationHandler) => void
  /**
   * Sends `payload` and returns once every other live server process has acted on it, or after
   * 2 s (a process whose LISTEN is down trusts no cache anyway; a warning is logged).
   */
  readonly publish: (payload: string) => Effect.Effect<void>
  /**
   * Returns once every other live process has acted on every payload committed so far: after a
   * change whose notification a trigger sent at its commit.
   */
  readonly barrier: Effect.Effect<void>
}

export class Invalidations extends Context.Tag("Invalidations")<Invalidations, InvalidationsShape>() {}

/**
 * The payloads of an account's cached records (its brands): `account:<id>`, or `account:*`
 * for every account. The triggers of migrations/0016_account_cache_invalidation.sql send them.
 */
const ACCOUNT_PAYLOAD = "account:"
const accountKey = (payload: string): number | "*" => (payload === "*" ? "*" : Number(payload))

/** A read-through cache whose entries the channel drops (see makeInvalidatedCache). */
export interface ChannelCache<K, V> {
  /** The cached value, else `load`'s (cached if the channel is live and nothing was invalidated meanwhile). */
  readonly read: <E, R>(key: K, load: Effect.Effect<V, E, R>) => Effect.Effect<V, E, R>
  /** Drops an entry changed by this process (the other processes hear of it through the channel). */
  readonly drop: (key: K) => void
  /** Replaces an entry in place, when the database changed with it (no invalidation). */
  readonly update: (key: K, f: (value: V) => V) => void
}

/** A cache of records keyed by something a payload names, on the channel (`key` of "*": every entry). */
export const channelCache = <K, V>(
  invalidations: InvalidationsShape,
  options: {
    readonly prefix: string
    readonly key: (payload: string) => K | "*"
    readonly maxWeight: number
    readonly weightOf?: (value: V) => number
  }
): ChannelCache<K, V> => {
  const cache = makeInvalidatedCache<K, V>(options.maxWeight, options.weightOf)
  invalidations.register({
    prefix: options.prefix,
    onPayload: (payload) => {
      const key = options.key(payload)
      if (key === "*") cache.clear()
      else cache.delete(key)
    },
    onLive: cache.clear
  })
  return {
    read: (key, load) => {
      // While deaf, a change may go unheard: the database answers.
      if (!invalidations.live()) return load
      const cached = cache.get(key)
      if (cached !== undefined) return Effect.succeed(cached)
      const readAt = cache.generation()
      return Effect.tap(load, (value) => {
        if (invalidations.live()) cache.set(key, value, readAt)
      })
    },
    drop: cache.delete,
    update: cache.update
  }
}

/** An account-keyed cache (ACCOUNT_PAYLOAD). */
export const accountCache = <V>(invalidations: InvalidationsShape, maxWeight: number, weightOf?: (value: V) => number) =>
  channelCache<number, V>(invalidations, { prefix: ACCOUNT_PAYLOAD, key: accountKey, maxWeight, ...(weightOf ? { weightOf } : {}) })

interface Waiter {
  readonly pending: Set<string>
  readonly done: Deferred.Deferred<void>
}

/** How often a live process sends itself a heartbeat through the channel. */
const HEARTBEAT_EVERY = Duration.seconds(1)
/**
 * A LISTEN that has not brought the process's own heartbeat back for this long is taken for dead
 * (a peer that vanished without closing the socket, a proxy that stopped forwarding): the caches are
 * bypassed and the connection is made afresh.
 */
const SILENT_AFTER_MS = 4_000

export const InvalidationsLive = Layer.scoped(
  Invalidations,
  Effect.gen(function*() {
    const database = yield* Database
    const handlers: Array<InvalidationHandler> = []
    const probe = `${PROBE_PREFIX}${crypto.randomUUID()}`
    let listening = false
    let everLive = false
    /** When this process last heard its own probe (performance.now()). */
    let heardAt = 0
    const heard = yield* Deferred.make<void>()
    /** Changes of this process waiting for the other processes to confirm (payload -> waiters). */
    const awaitingAcks = new Map<string, Array<Waiter>>()

    const dispatch = (payload: string) => {
      const prefixed = handlers.filter((handler) => handler.prefix !== "" && payload.startsWith(handler.prefix))
      const takers = prefixed.length > 0 ? prefixed : handlers.filter((handler) => handler.prefix === "")
      for (const handler of takers) handler.onPayload(payload.slice(handler.prefix.length))
    }

    const confirm = (payload: string) =>
      database.notify(INVALIDATION_CHANNEL, `${ACK_PREFIX}${database.instanceId}:${payload}`).pipe(
        Effect.catchAllCause(() => Effect.void),
        Effect.forkDaemon,
        Effect.asVoid
      )

    const sendProbe = database.notify(INVALIDATION_CHANNEL, probe).pipe(Effect.catchAllCause(() => Effect.void))

    const deaf = (why: string) =>
      Effect.suspend(() => {
        if (!listening) return Effect.void
        listening = false
        return Effect.logWarning(`invalidation channel: ${why}; the caches read the database until it is live again`)
      })

    const subscription = Effect.gen(function*() {
      yield* database.listen(INVALIDATION_CHANNEL).pipe(
        Stream.runForEach((payload) => {
          // Subscribed: whatever was missed meanwhile is dropped once the probe comes back.
          if (payload === Listening) return sendProbe
          if (payload === probe) {
            heardAt = performance.now()
            if (!listening) {
              for (const handler of handlers) handler.onLive()
              listening = true
              if (everLive) return Effect.logInfo("invalidation channel: listening again, every cache dropped")
              everLive = true
              Deferred.unsafeDone(heard, Exit.void)
              return Effect.void
            }
            return Effect.void
          }
          if (payload.startsWith(ACK_PREFIX)) {
            // "ack:<instance>:<payload>": that process has acted on the payload.
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
          if (!payload.startsWith(SYNC_PREFIX)) dispatch(payload)
          return confirm(payload)
        })
      )
      return yield* Effect.fail("the LISTEN ended")
    }).pipe(Effect.tapErrorCause((cause) => deaf(`LISTEN lost (${Cause.pretty(cause).split("\n")[0]})`)))

    yield* subscription.pipe(
      Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(2))))),
      Effect.catchAllCause(Effect.logWarning),
      Effect.forkScoped
    )
    // The heartbeat: a probe sent through the channel every 100 ms until it comes back, then every
    // second; one not back within SILENT_AFTER_MS makes the process deaf and reconnects. Elapsed time
    // is measured on the monotonic clock (the Clock's "now" may be fixed, as in tests).
    let sentAt = 0
    yield* Effect.suspend(() => {
      const now = performance.now()
      if (listening && now - heardAt > SILENT_AFTER_MS) {
        // Fails every stream of the connection: this subscription listens again on a new one.
        database.relisten()
        return deaf("no heartbeat back through the LISTEN")
      }
      if (listening && now - sentAt < Duration.toMillis(HEARTBEAT_EVERY)) return Effect.void
      sentAt = now
      return sendProbe
    }).pipe(Effect.repeat(Schedule.spaced(Duration.millis(100))), Effect.forkScoped)
    // Serve once listening (or after 5 s without: the caches then read the database until it is).
    yield* Deferred.await(heard).pipe(Effect.timeout(Duration.seconds(5)), Effect.ignore)

    const publish = (payload: string) =>
      Effect.gen(function*() {
        const peers = yield* database.peers().pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
        // Registered before the notification goes out, so no ack can come first.
        const waiter = peers.length === 0 ? undefined : { pending: new Set(peers), done: yield* Deferred.make<void>() }
        if (waiter !== undefined) awaitingAcks.set(payload, [...(awaitingAcks.get(payload) ?? []), waiter])
        yield* database.notify(INVALIDATION_CHANNEL, payload).pipe(Effect.catchAllCause(Effect.logWarning))
        if (waiter === undefined) return
        yield* Deferred.await(waiter.done).pipe(
          Effect.timeout(ACK_WAIT),
          Effect.catchAll(() => Effect.logWarning(`no confirmation from ${waiter.pending.size} server process(es)`)),
          Effect.ensuring(Effect.sync(() => {
            const left = (awaitingAcks.get(payload) ?? []).filter((w) => w !== waiter)
            if (left.length === 0) awaitingAcks.delete(payload)
            else awaitingAcks.set(payload, left)
          }))
        )
      })

    return {
      live: () => listening,
      register: (handler) => void handlers.push(handler),
      publish,
      barrier: Effect.suspend(() => publish(`${SYNC_PREFIX}${crypto.randomUUID()}`))
    }
  })
)

/**
 * Entries by key, filled from the database and dropped by invalidations. Every invalidation bumps a
 * generation: a database read that began before one may be older than it, so its answer is not
 * cached (else a change landing during the read would be undone). At `maxWeight` (the sum of the
 * entries' weights) it starts over empty: memory stays bounded whatever is read.
 */
const makeInvalidatedCache = <K, V>(maxWeight: number, weightOf: (value: V) => number = () => 1) => {
  const entries = new Map<K, V>()
  let weight = 0
  let generation = 0
  const clear = () => {
    generation++
    entries.clear()
    weight = 0
  }
  return {
    get: (key: K) => entries.get(key),
    generation: () => generation,
    /** Caches `value` unless an invalidation happened since `readAt` (a generation()). */
    set: (key: K, value: V, readAt: number) => {
      if (readAt !== generation) return
      const previous = entries.get(key)
      if (previous !== undefined) weight -= weightOf(previous)
      const added = weightOf(value)
      if (weight + added > maxWeight) {
        entries.clear()
        weight = 0
      }
      entries.set(key, value)
      weight += added
    },
    /** Replaces a cached entry in place (no invalidation: the value changed in the database with it). */
    update: (key: K, f: (value: V) => V) => {
      const entry = entries.get(key)
      if (entry === undefined) return
      const next = f(entry)
      weight += weightOf(next) - weightOf(entry)
      entries.set(key, next)
    },
    delete: (key: K) => {
      generation++
      const entry = entries.get(key)
      if (entry === undefined) return
      weight -= weightOf(entry)
      entries.delete(key)
    },
    clear
  }
}
