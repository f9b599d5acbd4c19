import { describe, expect, it } from "bun:test"
import { Schema } from "effect"
import corpusJson from "./fixtures/matomo-corpus.json"
import myipJson from "./fixtures/myip-corpus.json"
import { loadCatalog, makeClassifier } from "../../src/catalog/Classifier.js"
import { bundledMethods } from "../../src/verification/Methods.js"

// An independent labelled corpus (provenance inside the file; docs/catalog.md, "Measuring breadth"):
// precision, recall, kind and vendor accuracy of the classifier, kind and vendor counted over every
// AI row (a miss counts as wrong).
const Row = Schema.Struct({
  ua: Schema.String,
  vendor: Schema.NullOr(Schema.String),
  kind: Schema.NullOr(Schema.String),
  documented: Schema.optional(Schema.Boolean),
})
const Corpus = Schema.Struct({ rows: Schema.Array(Row) })
const corpus = Schema.decodeUnknownSync(Corpus)(corpusJson)
const myip = Schema.decodeUnknownSync(Corpus)(myipJson)
const classify = makeClassifier(loadCatalog().agents)

const measure = (rows: ReadonlyArray<typeof Row.Type>) => {
  let tp = 0
  let fp = 0
  let fn = 0
  let kindOk = 0
  let vendorOk = 0
  const wrong: Array<string> = []
  for (const r of rows) {
    const c = classify(r.ua)
    if (r.vendor === null) {
      if (c !== null) (fp++, wrong.push(`FP ${c.bot}: ${r.ua}`))
      continue
    }
    if (c === null) {
      fn++
      wrong.push(`FN ${r.vendor}: ${r.ua}`)
      continue
    }
    tp++
    if (c.kind === r.kind) kindOk++
    else wrong.push(`kind ${c.kind} != ${r.kind}: ${r.ua}`)
    if (c.vendor === r.vendor) vendorOk++
    else wrong.push(`vendor ${c.vendor} != ${r.vendor}: ${r.ua}`)
  }
  const ai = tp + fn
  return {
    precision: tp / (tp + fp),
    recall: tp / ai,
    kind: kindOk / ai,
    vendor: vendorOk / ai,
    wrong,
  }
}

describe("independent corpus (Matomo device-detector bot fixtures)", () => {
  it("meets the breadth targets on strings an operator documents", () => {
    const m = measure(corpus.rows.filter((r) => r.documented !== false))
    if (process.env.CORPUS_REPORT) console.log(JSON.stringify(m, null, 1))
    expect(m.precision).toBeGreaterThanOrEqual(0.99)
    expect(m.recall).toBeGreaterThanOrEqual(0.97)
    expect(m.kind).toBeGreaterThanOrEqual(0.95)
    expect(m.vendor).toBeGreaterThanOrEqual(0.95)
  })

  it("keeps zero false positives on the whole corpus, undocumented strings included", () => {
    const m = measure(corpus.rows)
    if (process.env.CORPUS_REPORT) console.log(JSON.stringify(m, null, 1))
    expect(m.wrong.filter((w) => w.startsWith("FP"))).toEqual([])
  })
})

// A second corpus, not a source of the catalog: the bot User-Agents myip.ms saw live, as isbot downloaded
// them (provenance inside the file; docs/catalog.md, "Measuring breadth").
describe("independent corpus (myip.ms live bot list)", () => {
  it("has 11,000+ distinct strings and 150+ AI rows", () => {
    expect(new Set(myip.rows.map((r) => r.ua)).size).toBe(myip.rows.length)
    expect(myip.rows.length).toBeGreaterThan(11_000)
    expect(myip.rows.filter((r) => r.vendor !== null).length).toBeGreaterThan(150)
  })

  it("meets the breadth targets on strings an operator documents", () => {
    const m = measure(myip.rows.filter((r) => r.documented !== false))
    if (process.env.CORPUS_REPORT) console.log(JSON.stringify(m, null, 1))
    expect(m.precision).toBeGreaterThanOrEqual(0.99)
    expect(m.recall).toBeGreaterThanOrEqual(0.97)
    expect(m.kind).toBeGreaterThanOrEqual(0.95)
    expect(m.vendor).toBeGreaterThanOrEqual(0.95)
  })

  it("keeps zero false positives on the whole corpus (Sina's iaskspider is not iAsk.ai)", () => {
    const m = measure(myip.rows)
    if (process.env.CORPUS_REPORT) console.log(JSON.stringify(m, null, 1))
    expect(m.wrong.filter((w) => w.startsWith("FP"))).toEqual([])
    expect(classify("iaskspider/2.0(+http://iask.com/help/help_index.html )")).toBeNull()
    expect(classify("Mozilla/5.0 AppleWebKit/605.1.15 (KHTML, like Gecko; compatible; iAskBot/1.0; +https://iask.ai/)")?.bot).toBe("iAskBot")
  })
})

describe("verification methods of the agents added from the corpus", () => {
  it("Google's user-triggered fetchers check Google's ranges and host names; agents without published methods have none", () => {
    const methods = bundledMethods()
    for (const bot of ["Google-Pinpoint", "Google-GeminiNotebook"]) expect(methods.get(bot)).toEqual(["ip_ranges", "reverse_dns"])
    for (const bot of ["MistralAI-Index", "ProRata", "Aider"]) expect(methods.get(bot) ?? []).toEqual([])
  })
})
