import { Context, Effect, Layer, Queue, Schema } from "effect"
import { mkdirSync, readdirSync } from "node:fs"
import { open, readFile, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import { IngestionConfig } from "./Config.js"
import { isLogFormat, type LogFormat } from "./formats/common.js"

/**
 * The durable spool of drain deliveries that could not be persisted (the database was down):
 * one file per delivery under DATA_DIR/spool, written once and fsynced (file and directory)
 * before the drain answers 200. A background fiber (SpoolReplayLive) replays the files in order.
 *
 * File: a JSON header line, then the body exactly as received (gzip or not). Name:
 * `<received ms, 15 digits>-<sequence, 8 digits>-<delivery id>.dlv`, so a sort is the order of
 * arrival; a `.tmp` file is a write that did not finish (never acknowledged) and is removed.
 */
export interface SpooledDelivery {
  readonly id: string
  readonly receivedAt: number
  readonly accountId: number
  readonly siteId: string
  readonly signature: string | null
  readonly body: Uint8Array
  /** The drain's `format` parameter (docs/ingestion.md, "Log sources"); absent means auto. */
  readonly format?: LogFormat | undefined
}

export class SpoolError extends Schema.TaggedError<SpoolError>()("SpoolError", { cause: Schema.Defect }) {}

export interface SpoolShape {
  readonly dir: string
  /** Durable when it succeeds. */
  readonly append: (delivery: SpooledDelivery) => Effect.Effect<void, SpoolError>
  /** File names waiting, oldest first. */
  readonly pending: Effect.Effect<ReadonlyArray<string>>
  /** The delivery of a file; null when the file is gone or unreadable. */
  readonly read: (name: string) => Effect.Effect<SpooledDelivery | null>
  readonly remove: (name: string) => Effect.Effect<void>
  /** Moves a file the replay cannot process (a bug, not an outage) aside, to spool/failed. */
  readonly quarantine: (name: string) => Effect.Effect<void>
  /** Completes when something was appended since the last call (or at once if it was). */
  readonly appended: Effect.Effect<void>
}

export class Spool extends Context.Tag("Spool")<Spool, SpoolShape>() {}

const SUFFIX = ".dlv"

const fsyncDir = async (dir: string) => {
  const handle = await open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export const encodeDelivery = (d: SpooledDelivery): Uint8Array => {
  const header = new TextEncoder().encode(
    JSON.stringify({ v: 1, id: d.id, receivedAt: d.receivedAt, accountId: d.accountId, siteId: d.siteId, signature: d.signature, ...(d.format !== undefined && d.format !== "auto" ? { format: d.format } : {}) }) + "\n"
  )
  const out = new Uint8Array(header.length + d.body.length)
  out.set(header, 0)
  out.set(d.body, header.length)
  return out
}

export const decodeDelivery = (bytes: Uint8Array): SpooledDelivery | null => {
  const nl = bytes.indexOf(10)
  if (nl === -1) return null
  try {
    const h = JSON.parse(new TextDecoder().decode(bytes.subarray(0, nl)))
    if (h.v !== 1 || typeof h.id !== "string" || typeof h.accountId !== "number" || typeof h.siteId !== "string") return null
    return {
      id: h.id,
      receivedAt: Number(h.receivedAt),
      accountId: h.accountId,
      siteId: h.siteId,
      signature: typeof h.signature === "string" ? h.signature : null,
      body: bytes.slice(nl + 1),
      ...(typeof h.format === "string" && isLogFormat(h.format) ? { format: h.format } : {})
    }
  } catch {
    return null
  }
}

export const SpoolLive = Layer.effect(
  Spool,
  Effect.gen(function*() {
    const { spoolDir: dir } = yield* IngestionConfig
    const failedDir = join(dir, "failed")
    yield* Effect.sync(() => mkdirSync(failedDir, { recursive: true }))
    const signal = yield* Queue.sliding<void>(1)
    let sequence = 0

    const list = () =>
      readdirSync(dir)
        .filter((name) => name.endsWith(SUFFIX))
        .sort()

    // Writes that never finished were never acknowledged: the sender retries them.
    yield* Effect.sync(() => {
      for (const name of readdirSync(dir)) if (name.endsWith(".tmp")) void rm(join(dir, name), { force: true })
    })

    const append: SpoolShape["append"] = (delivery) =>
      Effect.tryPromise({
        try: async () => {
          const seq = (sequence++ % 100_000_000).toString().padStart(8, "0")
          const name = `${String(delivery.receivedAt).padStart(15, "0")}-${seq}-${delivery.id}`
          const tmp = join(dir, name + ".tmp")
          const handle = await open(tmp, "wx")
          try {
            await handle.writeFile(encodeDelivery(delivery))
            await handle.sync()
          } finally {
            await handle.close()
          }
          await rename(tmp, join(dir, name + SUFFIX))
          await fsyncDir(dir)
        },
        catch: (cause) => new SpoolError({ cause })
      }).pipe(Effect.zipLeft(Queue.offer(signal, undefined)))

    return {
      dir,
      append,
      pending: Effect.sync(list).pipe(Effect.orElseSucceed(() => [])),
      read: (name) =>
        Effect.tryPromise(() => readFile(join(dir, name))).pipe(
          Effect.map((bytes) => decodeDelivery(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))),
          Effect.orElseSucceed(() => null)
        ),
      remove: (name) =>
        Effect.tryPromise(async () => {
          await rm(join(dir, name), { force: true })
          await fsyncDir(dir)
        }).pipe(Effect.ignore),
      quarantine: (name) => Effect.tryPromise(() => rename(join(dir, name), join(failedDir, name))).pipe(Effect.ignore),
      appended: Queue.take(signal)
    }
  })
)
