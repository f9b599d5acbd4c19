/**
 * `cli classify`: User-Agent strings on stdin, one a line; one JSON line each on stdout:
 * {"ua":...,"bot":...,"vendor":...,"kind":...}, the last three null when the line is not an AI crawler;
 * an agent's line adds "verification_methods" (docs/verification.md).
 *
 * Streams: input is decoded chunk by chunk (never buffered whole), output is written in batches.
 * CRLF and a last line without a newline are handled; an empty line yields a row of nulls.
 * Runnable on its own: `bun run src/verification/classifyCli.ts < uas.txt`.
 */
import { loadCatalog, makeClassifier, type Classification } from "../catalog/Classifier.js"
import { bundledMethods } from "./Methods.js"

export type Write = (chunk: string) => void | Promise<unknown>

const BATCH_CHARS = 1 << 16
const CACHE_MAX = 50_000

const suffixOf = (c: Classification | null, methods: (bot: string) => ReadonlyArray<string>): string =>
  c === null
    ? `,"bot":null,"vendor":null,"kind":null}\n`
    : `,"bot":${JSON.stringify(c.bot)},"vendor":${JSON.stringify(c.vendor)},"kind":${JSON.stringify(c.kind)},` +
      `"verification_methods":${JSON.stringify(methods(c.bot))}}\n`

export const runClassify = async (
  input: ReadableStream<Uint8Array>,
  write: Write,
  classify: (ua: string) => Classification | null = makeClassifier(loadCatalog().agents),
  methods: (bot: string) => ReadonlyArray<string> = (bot) => bundledMethods().get(bot) ?? [],
): Promise<void> => {
  // Log files repeat the same User-Agents: remember each line's JSON (bounded).
  const cache = new Map<string, string>()
  const suffixes = new Map<Classification | null, string>()
  let out = ""

  const line = (ua: string): string => {
    let json = cache.get(ua)
    if (json === undefined) {
      const c = classify(ua)
      let suffix = suffixes.get(c)
      if (suffix === undefined) {
        suffix = suffixOf(c, methods)
        suffixes.set(c, suffix)
      }
      json = `{"ua":${JSON.stringify(ua)}${suffix}`
      if (cache.size >= CACHE_MAX) cache.clear()
      cache.set(ua, json)
    }
    return json
  }

  const emit = async (ua: string) => {
    out += line(ua)
    if (out.length >= BATCH_CHARS) {
      const chunk = out
      out = ""
      const r = write(chunk)
      if (r instanceof Promise) await r
    }
  }

  const decoder = new TextDecoder()
  const reader = input.getReader()
  let rest = ""
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const text = rest + decoder.decode(value, { stream: true })
      let start = 0
      let nl = text.indexOf("\n", start)
      while (nl !== -1) {
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl
        await emit(text.slice(start, end))
        start = nl + 1
        nl = text.indexOf("\n", start)
      }
      rest = text.slice(start)
    }
  } finally {
    reader.releaseLock()
  }
  rest += decoder.decode()
  if (rest.length > 0) await emit(rest.endsWith("\r") ? rest.slice(0, -1) : rest)
  if (out.length > 0) {
    const r = write(out)
    if (r instanceof Promise) await r
  }
}

if (import.meta.main) {
  const writer = Bun.stdout.writer()
  await runClassify(Bun.stdin.stream(), async (chunk) => {
    writer.write(chunk)
    await writer.flush()
  })
  await writer.end()
}
