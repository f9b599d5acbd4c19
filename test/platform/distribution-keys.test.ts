import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { databaseBackends, makeTestApp, type TestApp } from "../helpers/app.js"
import { query } from "../ingestion/fixtures.js"

/**
 * Distribution-ready keys (docs/scale.md): a distributed PostgreSQL shards each account-owned table
 * by account_id, which it can only do when every primary key and unique constraint holds account_id,
 * and every foreign key between two such tables joins on it. Read from the catalog, so a table or a
 * constraint added later without account_id fails here.
 */

/** Looked up without an account (sign-in, API keys), or global: reference tables or coordinator-only. */
const NOT_ACCOUNT_OWNED = new Set([
  "accounts", "users", "sessions", "api_keys", "plans", "verification_snapshots", "schema_migrations", "time_partitioned"
])

for (const backend of databaseBackends()) {
  describe(`distribution keys on ${backend}`, () => {
    let app: TestApp
    beforeAll(async () => {
      app = await makeTestApp(backend)
    }, 60_000)
    afterAll(() => app.dispose())

    /** The schema's tables, partitions left out (they inherit their parent's keys). */
    const tables = async () =>
      (await query<{ name: string }>(app, `
        select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition order by 1`)).map((r) => r.name)

    /** Constraints of a kind (p, u, f) with their columns, and the table a foreign key references. */
    const constraints = (kind: "p" | "u" | "f") =>
      query<{ tbl: string; name: string; cols: Array<string>; ref: string | null }>(app, `
        select c.relname as tbl, k.conname as name,
               array(select a.attname::text from unnest(k.conkey) as u(n) join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n) as cols,
               (select r.relname from pg_class r where r.oid = k.confrelid) as ref
        from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and k.contype = $1 and not c.relispartition
          and k.conparentid = 0
        order by 1, 2`, [kind])

    it("every account-owned table has account_id and a primary key holding it", async () => {
      const owned = (await tables()).filter((name) => !NOT_ACCOUNT_OWNED.has(name))
      expect(owned.length).toBeGreaterThanOrEqual(30)
      const primary = new Map((await constraints("p")).map((c) => [c.tbl, c.cols]))
      // The two crawler rollups key on a nullable status (unique nulls not distinct): no primary key can
      // hold it, so their unique key is their identity and must hold account_id instead. No other table.
      const keyless = owned.filter((name) => !primary.has(name))
      expect(keyless).toEqual(["crawler_daily", "crawler_rollup"])
      const uniqueKeys = await constraints("u")
      for (const name of keyless) expect(uniqueKeys.some((c) => c.tbl === name && c.cols.includes("account_id"))).toBe(true)
      const lacking = owned.filter((name) => primary.has(name) && !primary.get(name)!.includes("account_id"))
      expect(lacking).toEqual([])
      // The tables the issue names are among them.
      for (const name of ["brands", "crawler_hits", "ai_referrals", "crawler_rollup", "crawler_span", "observations", "mentions",
                          "citations", "fanouts", "prompts", "competitors", "observation_daily", "scan_failures",
                          "webhook_endpoints", "webhook_deliveries"]) {
        if (!keyless.includes(name)) expect(primary.get(name)).toContain("account_id")
        expect(owned).toContain(name)
      }
    })

    it("every unique constraint and unique index of an account-owned table holds account_id", async () => {
      const unique = (await constraints("u")).filter((c) => !NOT_ACCOUNT_OWNED.has(c.tbl) && !c.cols.includes("account_id"))
      expect(unique).toEqual([])
      // Unique indexes that are no constraint (an expression, lower(name)) count too.
      const indexes = await query<{ tbl: string; name: string }>(app, `
        select c.relname as tbl, i.relname as name from pg_index x
        join pg_class c on c.oid = x.indrelid join pg_class i on i.oid = x.indexrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and x.indisunique and not c.relispartition
          and not exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'account_id' and a.attnum = any(x.indkey))
        order by 1, 2`)
      expect(indexes.filter((i) => !NOT_ACCOUNT_OWNED.has(i.tbl))).toEqual([])
    })

    it("every foreign key between account-owned tables joins on account_id", async () => {
      const foreign = await constraints("f")
      expect(foreign.length).toBeGreaterThan(20)
      const between = foreign.filter((c) => !NOT_ACCOUNT_OWNED.has(c.tbl) && c.ref !== null && !NOT_ACCOUNT_OWNED.has(c.ref))
      expect(between.length).toBeGreaterThan(20)
      expect(between.filter((c) => !c.cols.includes("account_id"))).toEqual([])
    })
  })
}
