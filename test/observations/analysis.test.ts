import { describe, expect, it } from "bun:test"
import { domainOf, listBucket, makeAnalysis, sentenceStarts, snippetOf } from "../../src/observations/Analysis.js"
import { makeLexiconScorer, sentimentLabel } from "../../src/observations/Sentiment.js"

const analysis = makeAnalysis(makeLexiconScorer())
const subject = {
  brand: { name: "Acme", domain: "acme.com", aliases: ["Acme CRM"] },
  competitors: [
    { id: 11, name: "Monday.com", domain: "monday.com", aliases: [] },
    { id: 12, name: "H&M", domain: "hm.com", aliases: ["Hennes & Mauritz"] },
    { id: 13, name: "Zendo", domain: "zendo.io", aliases: [] },
    { id: 14, name: "Globex", domain: "globex.com", aliases: [] }
  ]
}
const analyzer = analysis.compile(subject)
const none = { citations: [], fanouts: [] }

describe("entity matching (whole word, case-insensitive)", () => {
  it("does not find Acme inside Acmeville, finds it before punctuation and possessives", () => {
    expect(analyzer.analyse({ response: "We drove through Acmeville and Acmes.", ...none }).mentions).toEqual([])
    const result = analyzer.analyse({ response: "I like acme's support.", ...none })
    expect(result.mentions.map((m) => m.entity)).toEqual(["Acme"])
    expect(result.brandMentioned).toBe(true)
  })

  it("handles names with punctuation: Monday.com and H&M", () => {
    const result = analyzer.analyse({ response: "MONDAY.COM is fine. Shoppers love h&m. Monday is a day; HM is not H&M's name.", ...none })
    expect(result.mentions.map((m) => [m.entity, m.rank])).toEqual([["Monday.com", 1], ["H&M", 2]])
    // "Monday" alone and "HM" are not the names.
    expect(analyzer.analyse({ response: "See you Monday. HM said hi.", ...none }).mentions).toEqual([])
  })

  it("aliases count for their entity, a multi-word alias across a line break too", () => {
    const result = analyzer.analyse({ response: "Hennes &\nMauritz leads. Then Acme CRM.", ...none })
    expect(result.mentions.map((m) => m.entity)).toEqual(["H&M", "Acme"])
  })
})

describe("rank, snippet, sentiment, cited_url", () => {
  const response = [
    "Here are the best CRM tools for startups in 2026.",
    "",
    "1. **Globex** is an excellent choice with great reporting.",
    "2. **Acme** is popular, but some users report confusing pricing. Acme has a free plan.",
    "3. Monday.com gets complaints about poor support.",
    "",
    "Compare them before deciding."
  ].join("\n")
  const result = analyzer.analyse({
    response,
    citations: [
      "https://www.g2.com/categories/crm",
      "https://help.acme.com/pricing",
      "https://www.reddit.com/r/sales/comments/1",
      "https://en.wikipedia.org/wiki/CRM",
      "https://zendo.io/compare",
      "https://notacme.com/x",
      "https://WWW.Monday.com/crm"
    ],
    fanouts: [{ sub_question: "best crm 2026", citations: ["https://youtube.com/watch?v=1", "https://acme.com/blog"] }]
  })

  it("ranks by first text occurrence, then citation-only entities in citation order", () => {
    expect(result.mentions.map((m) => [m.entity, m.rank, m.viaCitationOnly])).toEqual([
      ["Globex", 1, false],
      ["Acme", 2, false],
      ["Monday.com", 3, false],
      ["Zendo", 4, true]
    ])
    expect(result.brandRank).toBe(2)
    expect(result.mentionedCompetitors).toBe(3)
  })

  it("takes the snippet from the sentence of the first occurrence, without markdown", () => {
    const byName = Object.fromEntries(result.mentions.map((m) => [m.entity, m]))
    expect(byName.Globex!.snippet).toBe("Globex is an excellent choice with great reporting.")
    expect(byName.Acme!.snippet).toBe("Acme is popular, but some users report confusing pricing.")
    expect(byName["Monday.com"]!.snippet).toBe("Monday.com gets complaints about poor support.")
    expect(byName.Zendo!.snippet).toBe("")
  })

  it("scores sentiment over the sentences naming the entity", () => {
    const byName = Object.fromEntries(result.mentions.map((m) => [m.entity, m]))
    expect(byName.Globex!.label).toBe("positive")
    expect(byName["Monday.com"]!.label).toBe("negative")
    expect(byName.Zendo!.label).toBe("neutral")
    expect(byName.Zendo!.sentiment).toBe(0)
    for (const m of result.mentions) expect(Math.abs(m.sentiment)).toBeLessThanOrEqual(1)
  })

  it("cited_url is the first citation on the entity's domain (subdomains included), else null", () => {
    const byName = Object.fromEntries(result.mentions.map((m) => [m.entity, m]))
    expect(byName.Acme!.citedUrl).toBe("https://help.acme.com/pricing")
    expect(byName["Monday.com"]!.citedUrl).toBe("https://WWW.Monday.com/crm")
    expect(byName.Globex!.citedUrl).toBeNull()
    expect(result.brandCited).toBe(true)
  })

  it("gives each citation its domain and bucket", () => {
    expect(result.citations.map((c) => [c.position, c.domain, c.bucket])).toEqual([
      [1, "g2.com", "earned"],
      [2, "help.acme.com", "owned"],
      [3, "reddit.com", "ugc"],
      [4, "en.wikipedia.org", "reference"],
      [5, "zendo.io", "competitor"],
      [6, "notacme.com", "earned"],
      [7, "monday.com", "competitor"]
    ])
    expect(result.fanouts).toEqual([
      {
        position: 1,
        subQuestion: "best crm 2026",
        citations: [
          { position: 1, url: "https://youtube.com/watch?v=1", domain: "youtube.com", bucket: "ugc" },
          { position: 2, url: "https://acme.com/blog", domain: "acme.com", bucket: "owned" }
        ]
      }
    ])
  })

  it("a brand mentioned only through a citation", () => {
    const only = analyzer.analyse({ response: "Globex is good.", citations: ["https://blog.acme.com/post"], fanouts: [] })
    expect(only.mentions.map((m) => [m.entity, m.rank, m.viaCitationOnly, m.citedUrl])).toEqual([
      ["Globex", 1, false, null],
      ["Acme", 2, true, "https://blog.acme.com/post"]
    ])
    expect(only.brandMentioned).toBe(true)
    expect(only.brandRank).toBe(2)
  })

  it("fan-out citations do not make mentions", () => {
    const r = analyzer.analyse({ response: "Nothing here.", citations: [], fanouts: [{ sub_question: "q", citations: ["https://acme.com"] }] })
    expect(r.mentions).toEqual([])
    expect(r.brandCited).toBe(false)
  })
})

describe("pieces", () => {
  it("domains: lower case, no www., invalid URLs are null", () => {
    expect(domainOf("https://WWW.Example.COM./a?b")).toBe("example.com")
    expect(domainOf("ftp://example.com")).toBeNull()
    expect(domainOf("not a url")).toBeNull()
    expect(listBucket("old.reddit.com")).toBe("ugc")
    expect(listBucket("de.wikipedia.org")).toBe("reference")
    expect(listBucket("notreddit.com")).toBe("earned")
  })

  it("sentences: Monday.com, abbreviations and list numbers do not split", () => {
    const text = "Try Monday.com today. It works, e.g. for teams.\n1. First item. Second one!"
    const starts = sentenceStarts(text)
    const sentences = starts.map((s, i) => text.slice(s, starts[i + 1] ?? text.length).trim())
    expect(sentences).toEqual(["Try Monday.com today.", "It works, e.g. for teams.", "1. First item.", "Second one!"])
  })

  it("a long sentence is cut to 300 characters around the occurrence", () => {
    const long = "word ".repeat(100) + "Acme is here " + "more ".repeat(100)
    const snippet = snippetOf(long, "Acme")
    expect(snippet.length).toBeLessThanOrEqual(300)
    expect(snippet).toContain("Acme is here")
    expect(snippet.startsWith("…")).toBe(true)
    expect(snippet.endsWith("…")).toBe(true)
  })

  it("labels: > 0.1 positive, < -0.1 negative", () => {
    expect(sentimentLabel(0.11)).toBe("positive")
    expect(sentimentLabel(0.1)).toBe("neutral")
    expect(sentimentLabel(-0.1)).toBe("neutral")
    expect(sentimentLabel(-0.2)).toBe("negative")
    const scorer = makeLexiconScorer()
    expect(scorer.score("This is not good")).toBeLessThan(-0.1)
    expect(scorer.score("an excellent tool")).toBeGreaterThan(0.1)
    expect(scorer.score("a tool")).toBe(0)
  })

  it("the scorer is replaceable", () => {
    const positive = makeAnalysis({ score: () => 0.5 }).compile(subject)
    expect(positive.analyse({ response: "Acme.", ...none }).mentions[0]!.label).toBe("positive")
  })
})
