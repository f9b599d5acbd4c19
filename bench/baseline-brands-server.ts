/**
 * The baseline of bench/brands-rps.ts and bench/load.ts: the smallest server doing the same logical
 * work, on raw Bun.serve and postgres.js. Not part of the service.
 * - GET /api/public/v1/brands: look the key up by its SHA-256, list the account's brands with the
 *   plan's cap (two prepared queries).
 * - POST /api/public/v1/agents/ingest/drain?site_id=: the key and the site in one query, every NDJSON
 *   line parsed, the AI crawlers among them picked by a regular expression, their rows inserted in
 *   one statement (unnest of column arrays) into `bare_hits` (crawler_hits' columns, no key, index
 *   or foreign key; bench/load.ts makes it). No verification, cap, rollup or deduplication.
 */
import postgres from "postgres"

// Pool 10; max_pipeline about connections / pool: with postgres.js's default (100) its internal
// queue grows under sustained load and every query pays for it (docs/performance.md).
// postgres.js 3.4 reads max_pipeline at run time but its typings omit it: pass the options as a value.
const options = { max: Number(process.env.POOL ?? 10), max_pipeline: Number(process.env.MAX_PIPELINE ?? 5), prepare: true }
const sql = postgres(process.env.DATABASE_URL!, options)
const port = Number(process.env.PORT ?? 8090)

const CRAWLER = /\b(GPTBot|ClaudeBot|PerplexityBot|OAI-SearchBot|ChatGPT-User|Amazonbot|meta-externalagent|Bytespider)\b/
const VENDOR: Record<string, string> = {
  GPTBot: "OpenAI", "OAI-SearchBot": "OpenAI", "ChatGPT-User": "OpenAI", ClaudeBot: "Anthropic", PerplexityBot: "Perplexity",
  Amazonbot: "Amazon", "meta-externalagent": "Meta", Bytespider: "ByteDance"
}
interface Line {
  readonly id?: string
  readonly timestamp?: number
  readonly proxy?: { readonly path?: string; readonly userAgent?: ReadonlyArray<string>; readonly statusCode?: number; readonly clientIp?: string; readonly host?: string }
}

const drain = async (request: Request, url: URL) => {
  const header = request.headers.get("authorization") ?? ""
  if (!header.startsWith("Bearer ")) return Response.json({ error: "missing Authorization header" }, { status: 401 })
  const hash = new Bun.CryptoHasher("sha256").update(header.slice(7)).digest("hex")
  const [site] = await sql`
    select b.id, b.account_id from api_keys k join brands b on b.account_id = k.account_id
    where k.key_hash = ${hash} and k.revoked_at is null and b.site_id = ${url.searchParams.get("site_id") ?? ""}`
  if (!site) return Response.json({ error: "unknown site" }, { status: 404 })
  const text = await request.text()
  const keys: Array<string> = []
  const ts: Array<string> = []
  const bots: Array<string> = []
  const vendors: Array<string> = []
  const hosts: Array<string> = []
  const paths: Array<string> = []
  const statuses: Array<number | null> = []
  const ips: Array<string | null> = []
  let scanned = 0
  for (const raw of text.split("\n")) {
    if (raw === "") continue
    scanned++
    const line = JSON.parse(raw) as Line
    const bot = CRAWLER.exec(line.proxy?.userAgent?.[0] ?? "")?.[1]
    if (bot === undefined || line.id === undefined) continue
    keys.push(line.id)
    ts.push(new Date(line.timestamp ?? 0).toISOString())
    bots.push(bot)
    vendors.push(VENDOR[bot]!)
    hosts.push(line.proxy?.host ?? "")
    paths.push(line.proxy?.path ?? "/")
    statuses.push(line.proxy?.statusCode ?? null)
    ips.push(line.proxy?.clientIp ?? null)
  }
  if (keys.length > 0) {
    await sql`
      insert into bare_hits (brand_id, record_key, account_id, ts, bot, vendor, kind, host, path, method, status, client_ip, channel)
      select ${site.id}, k, ${site.account_id}, t, b, v, 'training_crawler', h, p, 'GET', s, i, 'drain'
      from unnest(${keys}::text[], ${ts}::timestamptz[], ${bots}::text[], ${vendors}::text[], ${hosts}::text[], ${paths}::text[],
                  ${statuses}::int[], ${ips}::text[]) as u(k, t, b, v, h, p, s, i)`
  }
  return Response.json({ accepted: keys.length, scanned, skipped: scanned - keys.length })
}

Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === "/api/public/v1/agents/ingest/drain" && request.method === "POST") return drain(request, url)
    if (url.pathname !== "/api/public/v1/brands") return Response.json({ error: "not found" }, { status: 404 })
    const header = request.headers.get("authorization") ?? ""
    if (!header.startsWith("Bearer ")) return Response.json({ error: "missing Authorization header" }, { status: 401 })
    const hash = new Bun.CryptoHasher("sha256").update(header.slice(7)).digest("hex")
    const [key] = await sql`select account_id from api_keys where key_hash = ${hash} and revoked_at is null`
    if (!key) return Response.json({ error: "invalid API key" }, { status: 401 })
    const rows = await sql`
      select p.max_brands as "limit", b.id, b.slug, b.name, b.domain, b.vertical, p.scan_hours, b.next_scan_at, b.site_id, b.added_at
      from accounts a join plans p on p.id = a.plan_id left join brands b on b.account_id = a.id
      where a.id = ${key.account_id} order by b.added_at, b.id`
    const brands = rows.filter((r) => r.id !== null).map((r) => ({
      id: r.id,
      brand_slug: r.slug,
      brand_name: r.name,
      domain: r.domain,
      vertical: r.vertical,
      scan_frequency_hours: r.scan_hours,
      next_scan_at: r.next_scan_at.toISOString(),
      site_id: r.site_id,
      added_at: r.added_at.toISOString()
    }))
    return Response.json({ brands, count: brands.length, limit: rows[0]?.limit ?? 0 })
  }
})
console.log(`baseline listening on ${port}`)
