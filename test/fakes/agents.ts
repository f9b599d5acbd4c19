import { Effect, Layer } from "effect"
import {
  AgentsRepo,
  type AgentsRepoShape,
  type CrawlerFilter,
  type DailyRow,
  type DashboardFiguresRow,
  folderPrefix,
  type PageRow,
  type PagesQuery
} from "../../src/agents/Repo.js"
import type { FakeHitsStore } from "./ingestion.js"

/**
 * In-memory AgentsRepo over the fake ingestion store: the same contract as the SQL one, computed
 * from the stored hits on every call (the fake needs no rollups; the SQL tests check those).
 */
export const makeFakeAgentsRepo = (store: FakeHitsStore) => {
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
  const matches = (hit: FakeHitsStore["hits"][number], filter: CrawlerFilter) =>
    (filter.bot === null || hit.bot === filter.bot) && (filter.vendor === null || hit.vendor === filter.vendor) &&
    (filter.kind === null || hit.kind === filter.kind) &&
    (filter.verification == null || (hit.verification ?? "unverified") === filter.verification)
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

  const pageRows = (accountId: number, brandId: number, query: PagesQuery): Array<PageRow> => {
    const byPath = new Map<string, { hits: number; errors: number; bots: Set<string>; last: number }>()
    const prefix = query.folder === null ? undefined : folderPrefix(query.folder)
    for (const hit of store.hits) {
      if (hit.accountId !== accountId || hit.brandId !== brandId || !matches(hit, query.filter)) continue
      const day = dayOf(hit.ts)
      if (day < query.from || day > query.to) continue
      if (prefix === null && hit.path.slice(1).includes("/")) continue
      if (typeof prefix === "string" && !hit.path.startsWith(prefix)) continue
      if (query.q !== null && !hit.path.toLowerCase().includes(query.q.toLowerCase())) continue
      const s = hit.status
      if (query.status !== null) {
        if (s === null) continue
        if (query.status._tag === "ok" && !(s >= 200 && s <= 399)) continue
        if (query.status._tag === "error" && s < 400) continue
        if (query.status._tag === "code" && s !== query.status.code) continue
      }
      const row = byPath.get(hit.path) ?? { hits: 0, errors: 0, bots: new Set<string>(), last: 0 }
      row.hits++
      if (s !== null && s >= 400) row.errors++
      row.bots.add(hit.bot)
      row.last = Math.max(row.last, hit.ts)
      byPath.set(hit.path, row)
    }
    const rows = [...byPath].map(([path, r]) => ({
      path,
      hits: r.hits,
      errors: r.errors,
      uniques: r.bots.size,
      bots: [...r.bots].sort(cmp),
      last_seen: new Date(r.last)
    }))
    const sign = query.dir === "asc" ? 1 : -1
    return rows.sort((a, b) =>
      query.sort === "path" ? sign * cmp(a.path, b.path) : sign * (a[query.sort] - b[query.sort]) || cmp(a.path, b.path)
    )
  }

  /** The daily rows summed as the SQL repository sums them for GET /agents. */
  const figuresOf = (rows: ReadonlyArray<DailyRow>): DashboardFiguresRow => {
    const sums = <K>(key: (row: DailyRow) => K) => {
      const out = new Map<K, { row: DailyRow; hits: number }>()
      for (const row of rows) {
        const k = key(row)
        const sum = out.get(k) ?? { row, hits: 0 }
        sum.hits += row.hits
        out.set(k, sum)
      }
      return [...out.values()]
    }
    const trend = sums((row) => `${row.day}|${row.kind}`)
    const breakdown = sums((row) => JSON.stringify([row.bot, row.vendor, row.kind, row.status, row.verification]))
    return {
      trend_day: trend.map((s) => s.row.day),
      trend_kind: trend.map((s) => s.row.kind),
      trend_hits: trend.map((s) => s.hits),
      bot: breakdown.map((s) => s.row.bot),
      vendor: breakdown.map((s) => s.row.vendor),
      kind: breakdown.map((s) => s.row.kind),
      status: breakdown.map((s) => s.row.status),
      verification: breakdown.map((s) => s.row.verification),
      hits: breakdown.map((s) => s.hits)
    }
  }

  const daily: AgentsRepoShape["daily"] = (accountId, brandId, from, to, filter) =>
    Effect.sync(() => {
      const out = new Map<
        string,
        { day: string; bot: string; vendor: string; kind: string; status: number | null; verification: string; hits: number }
      >()
      for (const hit of store.hits) {
        if (hit.accountId !== accountId || hit.brandId !== brandId || !matches(hit, filter)) continue
        const day = dayOf(hit.ts)
        if (day < from || day > to) continue
        const verification = hit.verification ?? "unverified"
        const key = `${day}|${hit.bot}|${hit.status}|${verification}`
        const row = out.get(key) ??
          { day, bot: hit.bot, vendor: hit.vendor, kind: hit.kind, status: hit.status, verification, hits: 0 }
        row.hits++
        out.set(key, row)
      }
      return [...out.values()]
    })

  return Layer.succeed(AgentsRepo, {
    daily,
    dashboardFigures: (accountId, brandId, from, to, filter) => Effect.map(daily(accountId, brandId, from, to, filter), figuresOf),
    pages: (accountId, brandId, query) =>
      Effect.sync(() => {
        const rows = pageRows(accountId, brandId, query)
        return { rows: rows.slice(query.offset, query.offset + query.limit), total: rows.length }
      }),
    referrals: (accountId, brandId, from, to) =>
      Effect.sync(() => {
        const out = new Map<string, { day: string; engine: string; path: string; referrals: number }>()
        for (const r of store.referrals) {
          if (r.accountId !== accountId || r.brandId !== brandId) continue
          const day = dayOf(r.ts)
          if (day < from || day > to) continue
          const key = `${day}|${r.engine}|${r.path}`
          const row = out.get(key) ?? { day, engine: r.engine, path: r.path, referrals: 0 }
          row.referrals++
          out.set(key, row)
        }
        return [...out.values()]
      }),
    errorPaths: (accountId, brandId, query) =>
      Effect.sync(() =>
        pageRows(accountId, brandId, {
          ...query,
          filter: { bot: null, vendor: null, kind: null },
          folder: null,
          q: null,
          status: null,
          sort: "errors",
          dir: "desc",
          limit: Number.MAX_SAFE_INTEGER,
          offset: 0
        })
          .filter((row) => row.hits >= query.minHits && row.errors * 100 >= row.hits * query.minErrorPercent)
          .slice(0, query.limit)
          .map(({ path, hits, errors }) => ({ path, hits, errors }))
      ),
    pathStatuses: (accountId, brandId, from, to, paths) =>
      Effect.sync(() => {
        const out = new Map<string, { path: string; bot: string; status: number | null; hits: number }>()
        for (const hit of store.hits) {
          if (hit.accountId !== accountId || hit.brandId !== brandId || !paths.includes(hit.path)) continue
          const day = dayOf(hit.ts)
          if (day < from || day > to) continue
          const key = `${hit.path}|${hit.bot}|${hit.status}`
          const row = out.get(key) ?? { path: hit.path, bot: hit.bot, status: hit.status, hits: 0 }
          row.hits++
          out.set(key, row)
        }
        return [...out.values()]
      }),
    botVerdicts: (accountId, brandId, from, to) =>
      Effect.sync(() => {
        const out = new Map<string, { bot: string; hits: number; spoofed: number }>()
        for (const hit of store.hits) {
          if (hit.accountId !== accountId || hit.brandId !== brandId) continue
          const day = dayOf(hit.ts)
          if (day < from || day > to) continue
          const row = out.get(hit.bot) ?? { bot: hit.bot, hits: 0, spoofed: 0 }
          row.hits++
          if (hit.verification === "spoofed") row.spoofed++
          out.set(hit.bot, row)
        }
        return [...out.values()]
      }),
    pageBotVerdicts: (accountId, brandId, from, to, path, filter) =>
      Effect.sync(() => {
        const out = new Map<
          string,
          { bot: string; vendor: string; kind: string; verification: string; hits: number; errors: number; last_seen: Date }
        >()
        for (const hit of store.hits) {
          if (hit.accountId !== accountId || hit.brandId !== brandId || hit.path !== path || !matches(hit, filter)) continue
          const day = dayOf(hit.ts)
          if (day < from || day > to) continue
          const verification = hit.verification ?? "unverified"
          const key = `${hit.bot}|${verification}`
          const row = out.get(key) ??
            { bot: hit.bot, vendor: hit.vendor, kind: hit.kind, verification, hits: 0, errors: 0, last_seen: new Date(hit.ts) }
          row.hits++
          if (hit.status !== null && hit.status >= 400) row.errors++
          if (hit.ts > row.last_seen.getTime()) row.last_seen = new Date(hit.ts)
          out.set(key, row)
        }
        return [...out.values()]
      }),
    firstRollupDay: (accountId, brandId) =>
      Effect.sync(() => {
        const days = store.hits.filter((h) => h.accountId === accountId && h.brandId === brandId).map((h) => dayOf(h.ts)).sort()
        return days[0] ?? null
      }),
    ensureSpans: () => Effect.succeed("current" as const),
    staleSpans: () => Effect.succeed([]),
    // The fake keeps only raw hits (they stand in for the rollup): nothing is swept.
    sweep: () => Effect.succeed({ hits: 0, rollup: 0, daily: 0, referrals: 0 }),
    // Computed from the stored hits on every read: nothing waits to be folded.
    fold: () => Effect.succeed(0),
    queued: Effect.succeed(false),
    upkeep: Effect.void
  })
}
