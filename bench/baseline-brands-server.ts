/**
 * The baseline of bench/brands-rps.ts: the smallest server doing the same logical work as
 * GET /api/public/v1/brands (look the key up by its SHA-256, list the account's brands with
 * the plan's cap: two prepared queries), on raw Bun.serve and postgres.js. Not part of the service.
 */
import postgres from "postgres"

// Pool 10; max_pipeline about connections / pool: with postgres.js's default (100) its internal
// queue grows under sustained load and every query pays for it (docs/performance.md).
// postgres.js 3.4 reads max_pipeline at run time but its typings omit it: pass the options as a value.
const options = { max: Number(process.env.POOL ?? 10), max_pipeline: Number(process.env.MAX_PIPELINE ?? 5), prepare: true }
const sql = postgres(process.env.DATABASE_URL!, options)
const port = Number(process.env.PORT ?? 8090)

Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch(request) {
    const url = new URL(request.url)
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
