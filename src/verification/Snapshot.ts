import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { type CidrSet, makeCidrSet, parseCidr, prefixesIn } from "./Cidr.js"

/**
 * The operators' published IP range files as one dated snapshot (docs/verification.md): the copy
 * bundled in src/verification/ranges (manifest.json names each file's source URL and where it was
 * read from), or a newer one saved by `cli ranges update` in the database.
 */

export const RangeFileSchema = Schema.Struct({
  file: Schema.String,
  operator: Schema.String,
  source_url: Schema.String,
  /** Catalog bot names whose hits are checked against this file. */
  agents: Schema.Array(Schema.String),
  note: Schema.optional(Schema.String),
  prefixes: Schema.Array(Schema.String)
})
export interface RangeFile extends Schema.Schema.Type<typeof RangeFileSchema> {}

export const RangeSnapshotSchema = Schema.Struct({
  /** The day (YYYY-MM-DD) the files were read. */
  date: Schema.String,
  /** Where they were read from: the operators' URLs, a folder, or the mirror of the bundled copy. */
  read_from: Schema.String,
  files: Schema.Array(RangeFileSchema)
})
export interface RangeSnapshot extends Schema.Schema.Type<typeof RangeSnapshotSchema> {}

export const ManifestSchema = Schema.Struct({
  snapshot_date: Schema.String,
  read_from: Schema.Struct({ repo: Schema.String, commit: Schema.String, path: Schema.String }),
  files: Schema.Array(Schema.Struct({
    file: Schema.String,
    operator: Schema.String,
    source_url: Schema.String,
    agents: Schema.Array(Schema.String),
    note: Schema.optional(Schema.String),
    /** A file the main mirror lacks, read from another public mirror of the operator's file. */
    read_from: Schema.optional(Schema.Struct({ repo: Schema.String, commit: Schema.String }))
  }))
})
export type Manifest = typeof ManifestSchema.Type

export const RANGES_DIR = join(import.meta.dir, "ranges")

export const readManifest = (dir: string = RANGES_DIR): Manifest =>
  Schema.decodeUnknownSync(ManifestSchema)(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")))

/** The snapshot in the repository (read once). */
let bundled: RangeSnapshot | undefined
export const bundledSnapshot = (): RangeSnapshot => {
  if (bundled !== undefined) return bundled
  const manifest = readManifest()
  const others = manifest.files.flatMap((f) =>
    f.read_from === undefined ? [] : [`; ${f.file} from github.com/${f.read_from.repo} at ${f.read_from.commit}`]
  )
  bundled = {
    date: manifest.snapshot_date,
    read_from: `github.com/${manifest.read_from.repo} ${manifest.read_from.path} at ${manifest.read_from.commit}${others.join("")}`,
    files: manifest.files.map(({ read_from: _, ...f }) => ({ ...f, prefixes: prefixesIn(readFileSync(join(RANGES_DIR, f.file), "utf8")) }))
  }
  return bundled
}

/** Per bot, the union of the range files naming it. */
export interface RangeIndex {
  readonly snapshot: RangeSnapshot
  readonly byBot: ReadonlyMap<string, CidrSet>
  /** Every file's set, for `cli verify` on a bot the files do not name. */
  readonly byFile: ReadonlyArray<{ readonly file: RangeFile; readonly set: CidrSet }>
}

export const indexSnapshot = (snapshot: RangeSnapshot): RangeIndex => {
  const perBot = new Map<string, Array<NonNullable<ReturnType<typeof parseCidr>>>>()
  const byFile = snapshot.files.map((file) => {
    const cidrs = file.prefixes.map(parseCidr).filter((c) => c !== null)
    for (const bot of file.agents) perBot.set(bot, [...(perBot.get(bot) ?? []), ...cidrs])
    return { file, set: makeCidrSet(cidrs) }
  })
  return { snapshot, byBot: new Map([...perBot].map(([bot, cidrs]) => [bot, makeCidrSet(cidrs)])), byFile }
}
