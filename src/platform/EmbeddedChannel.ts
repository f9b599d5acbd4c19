import { SqlError } from "@effect/sql/SqlError"
import type { PGlite } from "@electric-sql/pglite"
import { deserialize, serialize } from "bun:jsc"
import { Effect, Schema } from "effect"
import { chmodSync, rmSync } from "node:fs"
import { connect, createServer, type Server, type Socket } from "node:net"
import { join } from "node:path"

/**
 * The embedded database's channel: a second process on the same data directory (the operator CLI
 * beside a running server) reaches the one PGlite instance through the process that holds it, over a
 * unix socket in the data directory (docs/operations.md "The embedded database's channel").
 *
 * PGlite has one session and no locking of its own, so only one process may open a data directory
 * (DataDirLock.ts). That process listens on `<DATA_DIR>/aiv.sock` (mode 0600: the data directory's
 * owner only, who can read the database files anyway) and runs each statement it receives with its own
 * client's semaphore, exactly as its own statements run: a statement waits while a transaction holds
 * the session, and a transaction of the other process holds it (its `begin` takes the permit, its
 * `end` or a closed socket gives it back, rolling back what was left open). Notifications of the
 * channels the other process listens to are forwarded to it.
 *
 * Frames: a 4-byte big-endian length, then a value in Bun's structured-clone form (`bun:jsc`), which
 * keeps rows' Dates and byte arrays as they are.
 */

export const channelPath = (dataDir: string) => join(dataDir, "aiv.sock")

/** A frame's payload is at most this large (a runaway row set is refused, not buffered without end). */
const MAX_FRAME = 256 * 1024 * 1024

const RequestSchema = Schema.Union(
  Schema.Struct({
    id: Schema.Number,
    op: Schema.Literal("query"),
    sql: Schema.String,
    params: Schema.Array(Schema.Unknown),
    rowMode: Schema.optional(Schema.Literal("array")),
    held: Schema.Boolean
  }),
  Schema.Struct({ id: Schema.Number, op: Schema.Literal("begin", "end") }),
  Schema.Struct({ id: Schema.Number, op: Schema.Literal("listen", "unlisten"), channel: Schema.String })
)
type Request = typeof RequestSchema.Type
/** A request as the other side sends it (the id is the connection's). */
export type ChannelRequest =
  | { readonly op: "query"; readonly sql: string; readonly params: ReadonlyArray<unknown>; readonly rowMode?: "array"; readonly held: boolean }
  | { readonly op: "begin" | "end" }
  | { readonly op: "listen" | "unlisten"; readonly channel: string }
const decodeRequest = Schema.decodeUnknownEither(RequestSchema)

const ReplySchema = Schema.Union(
  Schema.Struct({ id: Schema.Number, rows: Schema.Array(Schema.Unknown) }),
  Schema.Struct({ id: Schema.Number, ok: Schema.Literal(true) }),
  Schema.Struct({ id: Schema.Number, error: Schema.String }),
  Schema.Struct({ notify: Schema.String, payload: Schema.String })
)
export type Reply = typeof ReplySchema.Type
const decodeReply = Schema.decodeUnknownEither(ReplySchema)

const frame = (value: unknown): Buffer => {
  const body = serialize(value, { binaryType: "nodebuffer" })
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length)
  return Buffer.concat([head, body])
}

/** Reads frames from a socket's chunks; `onValue` gets each one's value. False: a frame too large (close). */
const framer = (onValue: (value: unknown) => void) => {
  let pending: Buffer = Buffer.alloc(0)
  return (chunk: Buffer): boolean => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0)
      if (length > MAX_FRAME) return false
      if (pending.length < 4 + length) break
      const body = pending.subarray(4, 4 + length)
      pending = pending.subarray(4 + length)
      let value: unknown
      try {
        value = deserialize(body)
      } catch {
        return false
      }
      onValue(value)
    }
    return true
  }
}

/** What the holding process shares with the channel: its statement runner and its session's permit. */
export interface EmbeddedSession {
  readonly db: PGlite
  readonly run: (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") => Effect.Effect<ReadonlyArray<unknown>, SqlError>
  readonly lock: Effect.Semaphore
}

const messageOf = (cause: unknown) =>
  cause instanceof SqlError
    ? (cause.cause instanceof Error ? cause.cause.message : cause.message)
    : cause instanceof Error
    ? cause.message
    : String(cause)

/** Serves the channel for the life of the scope (the holding process: a server, or a CLI alone). */
export const serveChannel = (dataDir: string, session: EmbeddedSession) =>
  Effect.acquireRelease(
    Effect.async<Server, SqlError>((resume) => {
      const path = channelPath(dataDir)
      // A socket file left by a process that died: this process holds the lock now.
      rmSync(path, { force: true })
      const sockets = new Set<Socket>()
      const server = createServer((socket) => {
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
        serveConnection(socket, session)
      })
      connections.set(server, sockets)
      server.once("error", (cause) => resume(Effect.fail(new SqlError({ cause, message: `Cannot listen on ${path}` }))))
      server.listen(path, () => {
        chmodSync(path, 0o600)
        resume(Effect.succeed(server))
      })
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const socket of connections.get(server) ?? []) socket.destroy()
        rmSync(channelPath(dataDir), { force: true })
      })
  )

const connections = new WeakMap<Server, Set<Socket>>()

const serveConnection = (socket: Socket, session: EmbeddedSession) => {
  /** Permits this connection holds (one per open transaction of the other process). */
  let held = 0
  let closed = false
  const listeners = new Map<string, () => Promise<void>>()
  const send = (reply: Reply) => {
    if (!socket.destroyed) socket.write(frame(reply))
  }
  const answer = (id: number, effect: Effect.Effect<Reply, SqlError>) =>
    void Effect.runPromise(effect.pipe(Effect.catchAll((error) => Effect.succeed<Reply>({ id, error: messageOf(error) })))).then(send)

  const handle = (request: Request) => {
    switch (request.op) {
      case "query": {
        if (request.held && held === 0) return send({ id: request.id, error: "not in a transaction of this connection" })
        const run = session.run(request.sql, request.params, request.rowMode)
        return answer(request.id, Effect.map(request.held ? run : session.lock.withPermits(1)(run), (rows) => ({ id: request.id, rows })))
      }
      case "begin":
        return answer(
          request.id,
          Effect.flatMap(session.lock.take(1), (): Effect.Effect<Reply> => {
            // Gone while it waited for the session: the permit goes straight back.
            if (closed) return Effect.as(session.lock.release(1), { id: request.id, error: "closed" })
            held++
            return Effect.succeed({ id: request.id, ok: true as const })
          })
        )
      case "end":
        if (held === 0) return send({ id: request.id, error: "no transaction to end" })
        held--
        return answer(request.id, Effect.as(session.lock.release(1), { id: request.id, ok: true as const }))
      case "listen":
        if (listeners.has(request.channel)) return send({ id: request.id, ok: true })
        return answer(
          request.id,
          Effect.tryPromise({
            try: () => session.db.listen(request.channel, (payload) => send({ notify: request.channel, payload })),
            catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
          }).pipe(Effect.map((unlisten) => {
            listeners.set(request.channel, unlisten)
            return { id: request.id, ok: true as const }
          }))
        )
      case "unlisten": {
        const unlisten = listeners.get(request.channel)
        listeners.delete(request.channel)
        return answer(request.id, Effect.promise(async () => unlisten?.()).pipe(Effect.as({ id: request.id, ok: true as const })))
      }
    }
  }

  const read = framer((value) => {
    const request = decodeRequest(value)
    if (request._tag === "Left") return socket.destroy()
    handle(request.right)
  })
  socket.on("data", (chunk: Buffer) => {
    if (!read(chunk)) socket.destroy()
  })
  socket.on("error", () => socket.destroy())
  socket.once("close", () => {
    closed = true
    for (const unlisten of listeners.values()) void unlisten().catch(() => undefined)
    listeners.clear()
    if (held === 0) return
    // A transaction left open by a process that went away: rolled back, and the session given back.
    const permits = held
    held = 0
    void Effect.runPromise(
      session.run("ROLLBACK", []).pipe(Effect.ignore, Effect.zipRight(session.lock.release(permits)))
    )
  })
}

/** The other side: one connection to the holding process, requests answered by id. */
export interface ChannelConnection {
  readonly request: (message: ChannelRequest) => Effect.Effect<Reply, SqlError>
  readonly onNotify: (channel: string, listener: ((payload: string) => void) | undefined) => void
  readonly close: () => void
}

/** Connects to the channel of the process holding `dataDir`: retries while it starts (`tries` × 250 ms). */
export const connectChannel = (dataDir: string, tries = 60): Effect.Effect<ChannelConnection, SqlError> =>
  Effect.async<Socket, SqlError>((resume) => {
    const path = channelPath(dataDir)
    let left = tries
    const attempt = () => {
      const socket = connect(path)
      socket.once("connect", () => {
        socket.removeAllListeners("error")
        resume(Effect.succeed(socket))
      })
      socket.once("error", (cause) => {
        socket.destroy()
        if (--left > 0) setTimeout(attempt, 250)
        else resume(Effect.fail(new SqlError({ cause, message: `No answer on ${path}` })))
      })
    }
    attempt()
  }).pipe(Effect.map((socket): ChannelConnection => {
    let next = 1
    const pending = new Map<number, (reply: Reply) => void>()
    const notifyListeners = new Map<string, (payload: string) => void>()
    let closed: string | undefined
    const failAll = (why: string) => {
      closed = why
      for (const resolve of pending.values()) resolve({ id: 0, error: why })
      pending.clear()
    }
    const read = framer((value) => {
      const reply = decodeReply(value)
      if (reply._tag === "Left") return
      const r = reply.right
      if ("notify" in r) return notifyListeners.get(r.notify)?.(r.payload)
      const resolve = pending.get(r.id)
      pending.delete(r.id)
      resolve?.(r)
    })
    socket.on("data", (chunk: Buffer) => {
      if (!read(chunk)) socket.destroy()
    })
    socket.on("error", () => socket.destroy())
    socket.once("close", () => failAll("the process holding the embedded database closed its channel"))
    // The channel must not keep the process alive once its work is done.
    socket.unref()
    return {
      request: (message) =>
        Effect.async<Reply, SqlError>((resume) => {
          if (closed !== undefined) return resume(Effect.fail(new SqlError({ message: closed })))
          const id = next++
          pending.set(id, (reply) => resume("error" in reply ? Effect.fail(new SqlError({ message: reply.error })) : Effect.succeed(reply)))
          socket.ref()
          socket.write(frame({ ...message, id }))
        }).pipe(Effect.ensuring(Effect.sync(() => pending.size === 0 && socket.unref()))),
      onNotify: (channel, listener) => {
        if (listener === undefined) notifyListeners.delete(channel)
        else notifyListeners.set(channel, listener)
      },
      close: () => socket.destroy()
    }
  }))
