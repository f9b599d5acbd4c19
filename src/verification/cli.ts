import { Console, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Classifier } from "../catalog/Classifier.js"
import { Database } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { prefixesIn } from "./Cidr.js"
import { VerificationRepo } from "./Repo.js"
import { bundledSnapshot, readManifest, type RangeFile } from "./Snapshot.js"
import { DirectoriesSchema, defaultDirectories, type KeyDirectory, RANGES_CHANNEL, type SavedSnapshot, Verification } from "./Verification.js"

/**
 * `cli ranges update [--from DIR]` and `cli verify <ip> <user agent>` (docs/verification.md).
 */

const fail = (message: string) => Effect.fail(new Error(message))

const fetchText = (url: string) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(20_000), headers: { accept: "application/json, text/plain" } })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      return await response.text()
    },
    catch: (cause) => new Error(`${url}: ${cause instanceof Error ? cause.message : String(cause)}`)
  })

const readText = (path: string) =>
  Effect.try({ try: () => readFileSync(path, "utf8"), catch: () => new Error(`cannot read ${path}`) })

/**
 * Reads every file the manifest lists (from its source URL, or from DIR under the same file name) and
 * saves them as the newest snapshot; running servers reload it on the NOTIFY. A file that cannot be
 * read or holds no prefix keeps its current prefixes (said on stderr); none read at all is an error.
 */
export const rangesUpdate = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fromIndex = args.indexOf("--from")
    const dir = fromIndex === -1 ? null : args[fromIndex + 1]
    if (fromIndex !== -1 && (dir === undefined || dir === "")) return yield* fail("usage: bun run cli ranges update [--from DIR]")
    const folder = dir === null || dir === undefined ? null : resolve(dir)
    const manifest = readManifest()
    const current = bundledSnapshot()
    const files: Array<RangeFile> = []
    let refreshed = 0
    // Where the bundled copy was mirrored from says nothing of a refreshed file.
    for (const { read_from: _, ...entry } of manifest.files) {
      const text = yield* Effect.either(folder === null ? fetchText(entry.source_url) : readText(join(folder, entry.file)))
      const prefixes = text._tag === "Right" ? prefixesIn(text.right) : []
      if (prefixes.length === 0) {
        const kept = current.files.find((f) => f.file === entry.file)?.prefixes ?? []
        yield* Console.error(`${entry.file}: ${text._tag === "Left" ? text.left.message : "no prefix found"}; kept ${kept.length} prefixes`)
        files.push({ ...entry, prefixes: kept })
        continue
      }
      refreshed++
      files.push({ ...entry, prefixes })
      yield* Console.log(`${entry.file}: ${prefixes.length} prefixes from ${folder === null ? entry.source_url : join(folder, entry.file)}`)
    }
    if (refreshed === 0) return yield* fail("no range file could be read: nothing saved")
    // Key directories of Web Bot Auth: DIR/key-directories.json, or each directory's URL.
    let directories: ReadonlyArray<KeyDirectory> = defaultDirectories()
    if (folder !== null) {
      const text = yield* Effect.either(readText(join(folder, "key-directories.json")))
      if (text._tag === "Right") {
        const decoded = Schema.decodeUnknownEither(Schema.parseJson(DirectoriesSchema))(text.right)
        if (decoded._tag === "Right") directories = decoded.right
        else yield* Console.error("key-directories.json: malformed; kept the bundled directories")
      }
    } else {
      const KeySet = Schema.parseJson(Schema.Struct({ keys: Schema.Array(Schema.Unknown) }))
      directories = yield* Effect.forEach(directories, (d) =>
        Effect.gen(function*() {
          const text = yield* Effect.either(fetchText(d.source_url))
          const decoded = text._tag === "Right" ? Schema.decodeUnknownEither(KeySet)(text.right) : null
          if (decoded === null || decoded._tag === "Left") {
            yield* Console.error(`${d.source_url}: not read; kept ${d.keys.length} keys`)
            return d
          }
          const keys = decoded.right.keys.filter((k): k is { kty: string; crv: string; x: string } =>
            typeof k === "object" && k !== null && (k as { kty?: unknown }).kty === "OKP" &&
            (k as { crv?: unknown }).crv === "Ed25519" && typeof (k as { x?: unknown }).x === "string"
          ).map((k) => ({ kty: k.kty, crv: k.crv, x: k.x }))
          yield* Console.log(`${d.source_url}: ${keys.length} Ed25519 keys`)
          return { ...d, keys }
        }))
    }
    const today = (yield* now).toISOString().slice(0, 10)
    const snapshot: SavedSnapshot = {
      date: today,
      read_from: folder === null ? "the operators' URLs" : `folder ${folder}`,
      files,
      directories
    }
    const id = yield* (yield* VerificationRepo).saveSnapshot(JSON.stringify(snapshot))
    yield* (yield* Database).notify(RANGES_CHANNEL, String(id)).pipe(Effect.orDie)
    yield* Console.log(`saved range snapshot ${id} of ${today} (${refreshed} of ${files.length} files refreshed); running servers reload it`)
  })

/** The verdict of one request: `verify <ip> <user agent...>`, with `--signature`, `--signature-input`, `--signature-agent`, `--host`, `--path`. */
export const verifyCommand = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const options = new Map<string, string>()
    const positional: Array<string> = []
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!
      if (a.startsWith("--") && i + 1 < args.length) options.set(a.slice(2), args[++i]!)
      else positional.push(a)
    }
    const [ip, ...uaParts] = positional
    const ua = uaParts.join(" ")
    if (ip === undefined || ua === "") return yield* fail("usage: bun run cli verify <ip> <user agent>")
    const classifier = yield* Classifier
    const verification = yield* Verification
    const agent = classifier.classify(ua)
    const info = verification.snapshot()
    if (agent === null) {
      yield* Console.log(`not an AI agent of the catalog: no verdict (User-Agent ${JSON.stringify(ua)})`)
      return
    }
    const result = yield* verification.explain({
      bot: agent.bot,
      vendor: agent.vendor,
      clientIp: ip === "-" ? null : ip,
      ts: (yield* now).getTime(),
      method: options.get("method") ?? "GET",
      host: options.get("host") ?? "",
      path: options.get("path") ?? "/",
      query: "",
      signature: options.get("signature") ?? null,
      signatureInput: options.get("signature-input") ?? null,
      signatureAgent: options.get("signature-agent") ?? null
    })
    yield* Console.log(`${agent.bot} (${agent.vendor}, ${agent.kind}): ${result.verdict}`)
    yield* Console.log(`why: ${result.why}`)
    yield* Console.log(`methods: ${result.methods.length === 0 ? "none published" : result.methods.join(", ")}`)
    yield* Console.log(`ranges: snapshot of ${info.date} (${info.files} files, ${info.prefixes} prefixes; ${info.read_from})`)
  })
