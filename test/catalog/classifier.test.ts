import { describe, expect, it } from "bun:test"
import { Effect, Schema } from "effect"
import fixtureJson from "./fixtures/user-agents.json"
import {
  AGENT_KINDS,
  bots,
  botsOfVendor,
  type Classification,
  Classifier,
  ClassifierLive,
  classifierFake,
  isKind,
  leadingLiteral,
  literalRuns,
  loadCatalog,
  makeClassifier,
  makeLiteralScanner,
  vendors,
} from "../../src/catalog/Classifier.js"
import { runClassify } from "../../src/verification/classifyCli.js"

const Row = Schema.Struct({
  ua: Schema.String,
  bot: Schema.NullOr(Schema.String),
  vendor: Schema.NullOr(Schema.String),
  kind: Schema.NullOr(Schema.String),
  source: Schema.String,
  note: Schema.optional(Schema.String),
})
const rows = Schema.decodeUnknownSync(Schema.Array(Row))(fixtureJson)
const catalog = loadCatalog()
const classify = makeClassifier(catalog.agents)
const aiRows = rows.filter((r) => r.bot !== null)
const nonAiRows = rows.filter((r) => r.bot === null)

const streamOf = (...chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === "string" ? new TextEncoder().encode(ch) : ch)
      c.close()
    },
  })

const runCli = async (...chunks: Array<string | Uint8Array>) => {
  let out = ""
  await runClassify(streamOf(...chunks), (s) => {
    out += s
  })
  return out
}

describe("catalog data", () => {
  it("has a version and 120+ agents with the required fields", () => {
    expect(catalog.version.length).toBeGreaterThan(0)
    expect(catalog.agents.length).toBeGreaterThanOrEqual(120)
    for (const a of catalog.agents) {
      expect(a.docs).toMatch(/^https?:\/\//)
      expect(a.sources.length).toBeGreaterThan(0)
      if (a.robots_only === true) expect(a.patterns).toEqual([])
      else expect(a.patterns.length).toBeGreaterThan(0)
    }
  })

  it("has unique bot names", () => {
    const names = catalog.agents.map((a) => a.bot)
    expect(new Set(names).size).toBe(names.length)
  })

  it("has patterns that compile, with a literal core and no top-level alternation", () => {
    for (const a of catalog.agents) {
      for (const p of a.patterns) {
        expect(() => new RegExp(p, "i")).not.toThrow()
        const longest = literalRuns(p).reduce((n, r) => Math.max(n, r.length), 0)
        expect(longest).toBeGreaterThanOrEqual(3)
      }
    }
  })

  it("covers every kind", () => {
    for (const k of AGENT_KINDS) expect(catalog.agents.some((a) => a.kind === k && a.robots_only !== true)).toBe(true)
  })
})

describe("fixture", () => {
  it("is large enough: 150+ AI rows over 60+ agents and 300+ non-AI rows", () => {
    expect(aiRows.length).toBeGreaterThanOrEqual(150)
    expect(new Set(aiRows.map((r) => r.bot)).size).toBeGreaterThanOrEqual(60)
    expect(nonAiRows.length).toBeGreaterThanOrEqual(300)
  })

  it("classifies every AI row to its bot, vendor and kind", () => {
    const wrong: Array<string> = []
    for (const r of aiRows) {
      const c = classify(r.ua)
      const got = c === null ? "null" : `${c.bot}|${c.vendor}|${c.kind}`
      const want = `${r.bot}|${r.vendor}|${r.kind}`
      if (got !== want) wrong.push(`${r.ua}\n  want ${want}\n  got  ${got}`)
    }
    expect(wrong).toEqual([])
  })

  it("has zero false positives on the non-AI rows", () => {
    const falsePositives = nonAiRows
      .map((r) => [r.ua, classify(r.ua)] as const)
      .filter(([, c]) => c !== null)
      .map(([ua, c]) => `${ua} -> ${c?.bot}`)
    expect(falsePositives).toEqual([])
  })

  it("matches every non-robots-only catalog entry with at least one fixture row", () => {
    const matched = new Set(aiRows.map((r) => classify(r.ua)?.bot))
    const missing = catalog.agents.filter((a) => a.robots_only !== true && !matched.has(a.bot)).map((a) => a.bot)
    expect(missing).toEqual([])
  })

  it("has no shadowing: each entry alone and in the full catalog classifies its own rows to itself", () => {
    const problems: Array<string> = []
    for (const a of catalog.agents) {
      if (a.robots_only === true) continue
      const alone = makeClassifier([a])
      for (const r of aiRows.filter((x) => x.bot === a.bot)) {
        if (alone(r.ua)?.bot !== a.bot) problems.push(`${a.bot}: own pattern misses ${r.ua}`)
        const full = classify(r.ua)?.bot
        if (full !== a.bot) problems.push(`${a.bot}: shadowed by ${full} on ${r.ua}`)
      }
    }
    expect(problems).toEqual([])
  })

  it("every fixture label names a catalog entry with the same vendor and kind", () => {
    const byBot = new Map(catalog.agents.map((a) => [a.bot, a]))
    for (const r of aiRows) {
      const a = byBot.get(r.bot!)
      expect(a).toBeDefined()
      expect(r.vendor).toBe(a!.vendor)
      expect(r.kind).toBe(a!.kind)
    }
  })
})

describe("matching rules", () => {
  it("never matches robots-only tokens", () => {
    for (const a of catalog.agents.filter((x) => x.robots_only === true)) {
      for (const ua of [a.bot, `${a.bot}/1.0`, `Mozilla/5.0 (compatible; ${a.bot}/1.0)`]) expect(classify(ua)).toBeNull()
    }
  })

  it("never matches the documented false friends on their own", () => {
    for (const f of catalog.false_friends ?? []) {
      for (const ua of [f.token, `${f.token}/1.0`, `Mozilla/5.0 (compatible; ${f.token}/1.0)`]) {
        expect([ua, classify(ua)]).toEqual([ua, null])
      }
    }
  })

  it("is case-insensitive and robust to surrounding text and versions", () => {
    expect(classify("gptbot/9.9")?.bot).toBe("GPTBot")
    expect(classify("MOZILLA/5.0 (COMPATIBLE; CLAUDEBOT/2.0; +CLAUDEBOT@ANTHROPIC.COM)")?.bot).toBe("ClaudeBot")
    expect(classify("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36; compatible; ChatGPT-User/1.0; +https://openai.com/bot")).toEqual({
      bot: "ChatGPT-User",
      vendor: "OpenAI",
      kind: "browsing_agent",
    })
  })

  it("picks the most specific agent when several match", () => {
    expect(classify("Mozilla/5.0 (compatible) Ai2Bot-Dolma (+https://www.allenai.org/crawler)")?.bot).toBe("Ai2Bot-Dolma")
    expect(classify("Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)")?.bot).toBe("AI2Bot")
    // two tokens in one string: the longer (more specific) one wins regardless of position
    expect(classify("Mozilla/5.0 (compatible; GPTBot/1.0) ChatGPT-User/1.0")?.bot).toBe("ChatGPT-User")
    expect(classify("Claude-User (claude-code/2.1.86; +https://support.anthropic.com/)")?.bot).toBe("Claude-User")
    expect(classify("claude-code/2.1.0 (claude-desktop, agent-sdk/0.3)")?.bot).toBe("Claude Code")
  })

  it("does not take a vendor's classic crawlers for AI agents", () => {
    for (const ua of [
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)",
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
      "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
      "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
      "Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)",
    ]) {
      expect(classify(ua)).toBeNull()
    }
  })

  it("handles empty and odd input", () => {
    expect(classify("")).toBeNull()
    expect(classify("-")).toBeNull()
    expect(classify("\u00e9\u4e2d\u6587")).toBeNull()
    expect(makeClassifier([])("GPTBot")).toBeNull()
  })

  it("supports patterns with capture groups of their own", () => {
    const c = makeClassifier([
      { bot: "A", vendor: "V", kind: "training_crawler", patterns: ["(foo)(bar)Bot"], docs: "https://x", sources: [] },
      { bot: "B", vendor: "W", kind: "search_crawler", patterns: ["bazBot"], docs: "https://x", sources: [] },
    ])
    expect(c("x foobarbot y")?.bot).toBe("A")
    expect(c("x bazbot y")?.bot).toBe("B")
  })
})

describe("literal scan", () => {
  it("takes the literal a pattern begins with, after ^ and lookbehinds, up to the first optional part", () => {
    expect(leadingLiteral("(?<![\\w-])GPTBot(?![\\w])")).toBe("gptbot")
    expect(leadingLiteral("^openai-mcp/")).toBe("openai-mcp/")
    expect(leadingLiteral("(?<![\\w-])Nova-?Act(?![\\w])")).toBe("nova")
    expect(leadingLiteral("(?<![\\w-])YaK/\\d")).toBe("yak/")
    expect(leadingLiteral("\\(compatible; ?Spider")).toBe("(compatible;")
    expect(leadingLiteral("ModelContextProtocol/[\\d.]+ \\(Autonomous")).toBe("modelcontextprotocol/")
    expect(leadingLiteral("(foo)(bar)Bot")).toBeNull()
  })

  it("reports every occurrence, overlapping ones included, case-insensitively and past non-ASCII text", () => {
    const lits = ["he", "she", "his", "hers"]
    const scan = makeLiteralScanner(lits)
    const out: Array<number> = []
    const found = (s: string) => {
      const w = scan(s, out)
      const r: Array<string> = []
      for (let j = 0; j < w; j += 2) r.push(`${out[j]}:${lits[out[j + 1]!]}`)
      return r.sort()
    }
    expect(found("uSHErs")).toEqual(["3:she", "3:he", "5:hers"].sort())
    expect(found("\u4e2d\u6587 his \u00e9he")).toEqual(["5:his", "9:he"])
    expect(found("nothing here? no: t-h-e")).toEqual(["9:he"])
    expect(found("")).toEqual([])
    expect(() => makeLiteralScanner(["Upper"])).toThrow()
  })

  it("at one start position prefers a whole token to a longer free-form pattern, and the longer match across positions", () => {
    const c = makeClassifier([
      { bot: "Free", vendor: "V", kind: "training_crawler", patterns: ["Acme-?Bot/\\d+ extra"], docs: "https://x", sources: [] },
      { bot: "Tok", vendor: "W", kind: "search_crawler", patterns: ["(?<![\\w-])AcmeBot(?![\\w])"], docs: "https://x", sources: [] },
      { bot: "Long", vendor: "X", kind: "browsing_agent", patterns: ["(?<![\\w-])AcmeBot-User(?![\\w])"], docs: "https://x", sources: [] },
    ])
    expect(c("AcmeBot/1 extra")?.bot).toBe("Tok")
    expect(c("Acme-Bot/1 extra")?.bot).toBe("Free")
    expect(c("AcmeBot/1 AcmeBot-User/2")?.bot).toBe("Long")
    expect(c("xAcmeBot/1")).toBeNull()
  })

  it("refuses a pattern with a top-level alternation (its leading literal would not cover the other branch)", () => {
    expect(() =>
      makeClassifier([{ bot: "Alt", vendor: "V", kind: "training_crawler", patterns: ["abcBot|defBot"], docs: "https://x", sources: [] }])
    ).toThrow(/alternation/)
  })
})

describe("helpers", () => {
  it("lists vendors, bots and kinds", () => {
    expect(vendors()).toContain("OpenAI")
    expect(vendors()).toContain("Anthropic")
    expect(new Set(vendors()).size).toBe(vendors().length)
    expect(bots()).toContain("GPTBot")
    expect(bots()).toContain("Google-Extended")
    expect(botsOfVendor("OpenAI")).toContain("OAI-SearchBot")
    expect(isKind("mcp_client")).toBe(true)
    expect(isKind("browser")).toBe(false)
    expect(isKind(3)).toBe(false)
  })
})

describe("Classifier service", () => {
  it("ClassifierLive classifies with the bundled catalog", async () => {
    const result = await Effect.runPromise(
      Effect.map(Classifier, (c) => ({ gpt: c.classify("GPTBot/1.2"), n: c.agents.length })).pipe(
        Effect.provide(ClassifierLive),
      ),
    )
    expect(result.gpt?.bot).toBe("GPTBot")
    expect(result.n).toBe(catalog.agents.length)
  })

  it("classifierFake answers from its map only", async () => {
    const fake: Classification = { bot: "TestBot", vendor: "Test", kind: "search_crawler" }
    const result = await Effect.runPromise(
      Effect.map(Classifier, (c) => [c.classify("ua-1"), c.classify("GPTBot/1.0"), c.agents.map((a) => a.bot)] as const).pipe(
        Effect.provide(classifierFake({ "ua-1": fake })),
      ),
    )
    expect(result).toEqual([fake, null, ["TestBot"]])
  })
})

describe("classifyCli", () => {
  it("prints GPTBot, OpenAI, training_crawler for the issue's example", async () => {
    const ua = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
    const out = await runCli(`${ua}\n`)
    expect(out).toBe(
      `${JSON.stringify({ ua, bot: "GPTBot", vendor: "OpenAI", kind: "training_crawler", verification_methods: ["ip_ranges"] })}\n`,
    )
  })

  it("handles CRLF, empty lines, a last line without newline, and chunks split anywhere", async () => {
    const input = "curl/8.5.0\r\n\r\nClaudeBot/1.0\n\nModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)"
    const bytes = new TextEncoder().encode(input)
    const expected = [
      { ua: "curl/8.5.0", bot: null, vendor: null, kind: null },
      { ua: "", bot: null, vendor: null, kind: null },
      { ua: "ClaudeBot/1.0", bot: "ClaudeBot", vendor: "Anthropic", kind: "training_crawler", verification_methods: ["ip_ranges"] },
      { ua: "", bot: null, vendor: null, kind: null },
      {
        ua: "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)",
        bot: "MCP Fetch (User-Specified)",
        vendor: "Model Context Protocol",
        kind: "mcp_client",
        verification_methods: [],
      },
    ]
    for (const split of [1, 3, 11, 12, 13, bytes.length]) {
      const chunks: Array<Uint8Array> = []
      for (let i = 0; i < bytes.length; i += split) chunks.push(bytes.slice(i, i + split))
      const out = await runCli(...chunks)
      expect(out.endsWith("\n")).toBe(true)
      expect(out.trimEnd().split("\n").map((l) => JSON.parse(l))).toEqual(expected)
    }
  })

  it("decodes multi-byte UTF-8 split across chunks and escapes JSON", async () => {
    const bytes = new TextEncoder().encode('Bot "é中"\\x\n')
    const out = await runCli(bytes.slice(0, 6), bytes.slice(6))
    expect(JSON.parse(out)).toEqual({ ua: 'Bot "é中"\\x', bot: null, vendor: null, kind: null })
  })

  it("writes nothing for empty input and one row per line for many lines, in batches", async () => {
    expect(await runCli()).toBe("")
    const lines = aiRows.concat(nonAiRows).map((r) => r.ua)
    const many = Array.from({ length: 40 }, () => lines).flat()
    const chunks: Array<string> = []
    await runClassify(streamOf(many.join("\n") + "\n"), (s) => {
      chunks.push(s)
    })
    const out = chunks.join("").trimEnd().split("\n")
    expect(out.length).toBe(many.length)
    expect(chunks.length).toBeGreaterThan(1)
    expect(chunks.length).toBeLessThan(many.length / 10)
    for (let i = 0; i < lines.length; i++) {
      const r = JSON.parse(out[i]!)
      expect(r.ua).toBe(lines[i])
      expect(r.bot).toBe(classify(lines[i]!)?.bot ?? null)
    }
  })
})
