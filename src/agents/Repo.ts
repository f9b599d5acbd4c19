import { SqlClient, type Statement } from "@effect/sql"
import { Context, Effect, Layer, Option, Predicate, Schema } from "effect"
import { DAY_MS, dayList, dayMs, isoDay } from "../platform/Days.js"
import { FOLD_LOCK } from "../platform/FoldLock.js"
import { BackgroundSql } from "../platform/Sql.js"
import { countOf, firstRow, rows, singleRow } from "../platform/Rows.js"
import type { PAGE_SORT_COLUMNS } from "./Api.js"

/**
 * Reads of crawler traffic (docs/agents.md). Every crawler figure comes from a rollup, never from
 * the raw hits: crawler_daily (per day, bot, status) for KPIs, trend and breakdowns; crawler_span
 * (per path and bot, the last 7/30/90 days) for the pages lists; crawler_rollup (per day, path,
 * bot, status) for what the span cannot answer (one exact status code). Every query is filtered by
 * the account of the caller as well as the brand.
 */

/** bot, vendor and kind, AND-combined; null = not filtered. */
export interface CrawlerFilter {
  readonly bot: string | null
  readonly vendor: string | null
  readonly kind: string | null
  /** docs/verification.md: verified, spoofed or unverified; absent or null = not filtered. */
  readonly verification?: string | null
}

export type StatusFilter =
  | { readonly _tag: "ok" }
  | { readonly _tag: "error" }
  | { readonly _tag: "code"; readonly code: number }

export type PageSort = (typeof PAGE_SORT_COLUMNS)[number]

export interface PagesQuery {
  /** First and last day (UTC, YYYY-MM-DD) of the range; `to` is today. */
  readonly from: string
  readonly to: string
  /** The range's length in days (7, 30 or 90): picks the span rows. */
  readonly days: number
  readonly filter: CrawlerFilter
  /** A top-level folder name, "/" (pages at the root), or null. */
  readonly folder: string | null
  /** Case-insensitive substring of the path, or null. */
  readonly q: string | null
  readonly status: StatusFilter | null
  readonly sort: PageSort
  readonly dir: "asc" | "desc"
  readonly limit: number
  readonly offset: number
}

/** A path's figures in the range, as the pages queries read them (before the bot names are added). */
const PageFigures = Schema.Struct({
  path: Schema.String,
  hits: Schema.Number,
  errors: Schema.Number,
  uniques: Schema.Number,
  last_seen: Schema.DateFromSelf
})
/** A page of the list: with `total`, the number of paths matching (a window function over the same rows). */
const PageFiguresRow = Schema.Struct({ ...PageFigures.fields, total: Schema.Number })
const PageBotsRow = Schema.Struct({ path: Schema.String, bots: Schema.Array(Schema.String) })
/** A path's bot names from its span rows (sorted) and from its queued hits (spanBotsOf, and queued_bots). */
const QueuedBotsRow = Schema.Struct({ ...PageBotsRow.fields, queued_bots: Schema.Array(Schema.String) })
/** The bot names of a row with its queued hits' added: sorted in byte order (the names are ASCII), each once. */
const withQueuedBots = <A extends { readonly bots: ReadonlyArray<string>; readonly queued_bots: ReadonlyArray<string> }>(
  { queued_bots, ...row }: A
): Omit<A, "queued_bots"> => {
  if (queued_bots.length === 0) return row
  const bots = [...new Set([...row.bots, ...queued_bots])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return { ...row, bots }
}
/** What every row of the one-statement page read carries: the total, the day the spans end and the brand's first rollup day. */
const PageReadMeta = Schema.Struct({
  total: Schema.Number,
  asOf: Schema.NullOr(Schema.String),
  firstDay: Schema.NullOr(Schema.String)
})
/** A row of the one-statement page read: a path of the page and the figures above. */
const CurrentPageRow = Schema.Struct({
  ...PageFigures.fields,
  bots: Schema.Array(Schema.String),
  queued_bots: Schema.Array(Schema.String),
  ...PageReadMeta.fields
})
/** The one-statement page read: the figures (undefined only if no row came back) and the page's rows. */
interface PageRead {
  readonly meta: typeof PageReadMeta.Type | undefined
  readonly page: ReadonlyArray<typeof CurrentPageRow.Type>
}

export const PageRow = Schema.Struct({ ...PageFigures.fields, bots: Schema.Array(Schema.String) })
export type PageRow = typeof PageRow.Type

export const DailyRow = Schema.Struct({
  day: Schema.String,
  bot: Schema.String,
  vendor: Schema.String,
  kind: Schema.String,
  status: Schema.NullOr(Schema.Number),
  verification: Schema.String,
  hits: Schema.Number
})
export type DailyRow = typeof DailyRow.Type

/**
 * GET /agents' figures of a range, summed by PostgreSQL in two lists: hits per (day, kind), the trend,
 * and hits per (bot, vendor, kind, status, verdict), every breakdown, whose rows do not grow with the
 * range's days. Each list comes as parallel json arrays (pg parses json natively; a row per day, bot,
 * status and verdict grew with every bot, status code and day, and each of its fields was a string
 * made in JavaScript).
 */
export const DashboardFiguresRow = Schema.Struct({
  trend_day: Schema.Array(Schema.String),
  trend_kind: Schema.Array(Schema.String),
  trend_hits: Schema.Array(Schema.Number),
  bot: Schema.Array(Schema.String),
  vendor: Schema.Array(Schema.String),
  kind: Schema.Array(Schema.String),
  status: Schema.Array(Schema.NullOr(Schema.Number)),
  verification: Schema.Array(Schema.String),
  hits: Schema.Array(Schema.Number)
})
export type DashboardFiguresRow = typeof DashboardFiguresRow.Type

export const ReferralCount = Schema.Struct({
  day: Schema.String,
  engine: Schema.String,
  path: Schema.String,
  referrals: Schema.Number
})
export type ReferralCount = typeof ReferralCount.Type

/** A path's hits and error hits in a range (the pages list's figures, docs/actions.md). */
export const PathErrorsRow = Schema.Struct({ path: Schema.String, hits: Schema.Number, errors: Schema.Number })
export type PathErrorsRow = typeof PathErrorsRow.Type

/** Hits of one (path, bot, status) in a range; status null when unknown. */
export const PathStatusRow = Schema.Struct({
  path: Schema.String,
  bot: Schema.String,
  status: Schema.NullOr(Schema.Number),
  hits: Schema.Number
})
export type PathStatusRow = typeof PathStatusRow.Type

/** A bot's hits in a range and those of them whose verdict is spoofed. */
export const BotVerdictRow = Schema.Struct({ bot: Schema.String, hits: Schema.Number, spoofed: Schema.Number })
export type BotVerdictRow = typeof BotVerdictRow.Type

/** Hits of one path per (bot, verdict) in a range: errors among them and the latest (the bots of one page). */
export const PageBotVerdictRow = Schema.Struct({
  bot: Schema.String,
  vendor: Schema.String,
  kind: Schema.String,
  verification: Schema.String,
  hits: Schema.Number,
  errors: Schema.Number,
  last_seen: Schema.DateFromSelf
})
export type PageBotVerdictRow = typeof PageBotVerdictRow.Type

/** Which paths count as failing (docs/actions.md): enough hits, and a share of them errors. */
export interface ErrorPathsQuery {
  readonly from: string
  readonly to: string
  /** 7, 30 or 90: the span rows read. */
  readonly days: number
  readonly minHits: number
  /** errors * 100 >= hits * minErrorPercent (integers: no rounding at the threshold). */
  readonly minErrorPercent: number
  readonly limit: number
}

const DayRow = Schema.Struct({ day: Schema.NullOr(Schema.String) })
const AsOfRow = Schema.Struct({ asOf: Schema.NullOr(Schema.String) })
const LockedStateRow = Schema.Struct({ asOf: Schema.NullOr(Schema.String), gap: Schema.NullOr(Schema.Number) })
const DifferRow = Schema.Struct({ differ: Schema.Boolean })
const BrandKeyRow = Schema.Struct({ accountId: Schema.Number, brandId: Schema.Number })
const FoldRow = Schema.Struct({ locked: Schema.Boolean })
const FoldedRow = Schema.Struct({ folded: Schema.Number })
const QueuedRow = Schema.Struct({ queued: Schema.Boolean })
const GrownRow = Schema.Struct({ name: Schema.String })
/**
 * The two grouping sets of GET /agents' figures (dashboardFigures) by their grouping() value over
 * (day, kind, bot, vendor, status, verification): a bit (32, 16, 8, 4, 2, 1) set for each column the
 * set leaves out.
 */
const TREND_SET = 8 + 4 + 2 + 1
const BREAKDOWN_SET = 32

/** One json array per column of a grouping set's rows (array_agg over the rows of that set only). */
const setArrays = (set: number, columns: ReadonlyArray<readonly [column: string, name: string]>) =>
  columns.map(([column, name]) => `coalesce(array_to_json(array_agg(${column}) filter (where g = ${set})), '[]') as ${name}`)

/** The select list of dashboardFigures (DashboardFiguresRow's columns), made once. */
const DASHBOARD_FIGURES_COLUMNS = [
  ...setArrays(TREND_SET, [["day", "trend_day"], ["kind", "trend_kind"], ["hits", "trend_hits"]]),
  ...setArrays(BREAKDOWN_SET, ["bot", "vendor", "kind", "status", "verification", "hits"].map((c) => [c, c] as const))
].join(", ")

/** The windows the spans hold, in days: the suffixes of both span tables' columns (hits_7, hits_30, hits_90, ...). */
const WINDOWS = [7, 30, 90] as const

/** A span window's counted columns (0 where the (path, bot) has no hit in it) and its times (null then). */
const SPAN_SUMS = ["hits", "oks", "errors"] as const
const SPAN_TIMES = ["last_seen", "last_ok", "last_error"] as const

/** The crawler_span columns of some windows, in their order. */
const spanWindowColumns = (windows: ReadonlyArray<number>) =>
  windows.flatMap((w) => [...SPAN_SUMS, ...SPAN_TIMES].map((c) => `${c}_${w}`)).join(", ")

/** An upsert's update of a span table's columns of some windows: each window's sums added, its times the later. */
const windowUpdate = (table: string, sums: ReadonlyArray<string>, times: ReadonlyArray<string>, windows: ReadonlyArray<number>) =>
  windows.flatMap((w) => [
    ...sums.map((c) => `${c}_${w} = ${table}.${c}_${w} + excluded.${c}_${w}`),
    ...times.map((c) => `${c}_${w} = greatest(${table}.${c}_${w}, excluded.${c}_${w})`)
  ]).join(", ")

/** windowUpdate of crawler_span. */
const spanWindowUpdate = (windows: ReadonlyArray<number>) => windowUpdate("crawler_span", SPAN_SUMS, SPAN_TIMES, windows)

/** A crawler_span row `s` as one (span, h, o, e) row per window. */
const SPAN_WINDOW_ROWS = WINDOWS.map((w) => `(${w}, s.hits_${w}, s.oks_${w}, s.errors_${w})`).join(", ")

/** The bit of a window in crawler_page_span.entered (migration 0029). */
const ENTERED_BIT: Readonly<Record<typeof WINDOWS[number], number>> = { 7: 1, 30: 2, 90: 4 }

/** A page span window's counted columns (0 where the path has no hit in it) and its times (null then). */
const PAGE_SUMS = ["hits", "oks", "errors", "uniques", "ok_uniques", "error_uniques"] as const
const PAGE_TIMES = ["last_seen", "last_ok", "last_error"] as const

/** Every window's columns of crawler_page_span, in one order (the rebuild's and the fold's inserts). */
const PAGE_WINDOW_COLUMNS = WINDOWS.flatMap((w) => [...PAGE_SUMS, ...PAGE_TIMES].map((c) => `${c}_${w}`)).join(", ")

/** One list of expressions per window, joined in WINDOWS' order (to match PAGE_WINDOW_COLUMNS). */
const perWindow = (expressions: (window: number) => ReadonlyArray<string>) => WINDOWS.flatMap(expressions).join(", ")

/** PAGE_WINDOW_COLUMNS of a path from its crawler_span rows (one per bot): uniques counts the bots with hits in the window. */
const PAGE_REBUILD_LIST = perWindow((w) => [
  `coalesce(sum(hits_${w}), 0)::int`,
  `coalesce(sum(oks_${w}), 0)::int`,
  `coalesce(sum(errors_${w}), 0)::int`,
  `(count(*) filter (where hits_${w} > 0))::int`,
  `(count(*) filter (where oks_${w} > 0))::int`,
  `(count(*) filter (where errors_${w} > 0))::int`,
  `max(last_seen_${w})`,
  `max(last_ok_${w})`,
  `max(last_error_${w})`
])

/** The oldest age in days (the spans' `as_of` minus the hit's day) a window holds: its length minus one. */
const OLDEST_AGE = Math.max(...WINDOWS) - 1

/**
 * The crawler_span columns of every window (spanWindowColumns' order) from the fold's hits of one
 * (path, bot), each with its `age` (days before the spans' `as_of`, 0 to OLDEST_AGE): a window of w
 * days holds the ages under w.
 */
const SPAN_FOLD_LIST = WINDOWS.flatMap((w) => {
  const ok = "status between 200 and 399"
  const error = "status >= 400"
  return [
    `(count(*) filter (where age < ${w}))::int as hits_${w}`,
    `(count(*) filter (where age < ${w} and ${ok}))::int as oks_${w}`,
    `(count(*) filter (where age < ${w} and ${error}))::int as errors_${w}`,
    `max(ts) filter (where age < ${w}) as last_seen_${w}`,
    `max(ts) filter (where age < ${w} and ${ok}) as last_ok_${w}`,
    `max(ts) filter (where age < ${w} and ${error}) as last_error_${w}`
  ]
}).join(", ")

/** The counted columns of a (path, bot)'s crawler_span row `p` before the fold, every window. */
const SPAN_BEFORE_COLUMNS = WINDOWS.flatMap((w) => SPAN_SUMS.map((c) => `p.${c}_${w}`)).join(", ")

/**
 * PAGE_WINDOW_COLUMNS of a path from the fold's rows of its bots `k` (SPAN_FOLD_LIST's columns) and
 * each bot's span row before the fold `p` (none: all null): a bot with hits in a window whose row had
 * none there is a new distinct bot of the path in it (of its oks, its errors alike).
 */
const PAGE_FOLD_LIST = perWindow((w) => [
  `sum(k.hits_${w})::int`,
  `sum(k.oks_${w})::int`,
  `sum(k.errors_${w})::int`,
  `(count(*) filter (where k.hits_${w} > 0 and coalesce(p.hits_${w}, 0) = 0))::int`,
  `(count(*) filter (where k.oks_${w} > 0 and coalesce(p.oks_${w}, 0) = 0))::int`,
  `(count(*) filter (where k.errors_${w} > 0 and coalesce(p.errors_${w}, 0) = 0))::int`,
  `max(k.last_seen_${w})`,
  `max(k.last_ok_${w})`,
  `max(k.last_error_${w})`
])

/** The windows a new page span row of the fold enters (ENTERED_BIT of each with hits), and an updated one's. */
const ENTERED_NEW = WINDOWS.map((w) => `${ENTERED_BIT[w]} * (sum(k.hits_${w}) > 0)::int`).join(" + ")
const ENTERED_UPDATED = WINDOWS.map((w) =>
  `${ENTERED_BIT[w]} * (crawler_page_span.hits_${w} = 0 and excluded.hits_${w} > 0)::int`
).join(" + ")

/** Per brand, the paths of the fold's returned page span rows that entered each window: n7, n30, n90. */
const ENTERED_COUNTS = WINDOWS.map((w) => `(count(*) filter (where entered & ${ENTERED_BIT[w]} > 0))::int as n${w}`).join(", ")

/** The fold's update of a page span row (windowUpdate of every window). */
const PAGE_WINDOW_UPDATE = windowUpdate("crawler_page_span", PAGE_SUMS, PAGE_TIMES, WINDOWS)

/** The tables a fold writes (upkeep). */
const FOLDED_TABLES = ["crawler_rollup", "crawler_daily", "crawler_span", "crawler_page_span"] as const
/** The tables a brand's spans are built into (ensureSpans). */
const SPAN_TABLES = ["crawler_span", "crawler_page_span"] as const

export type SpanUpdate = "current" | "rolled" | "rebuilt"

export interface SweepResult {
  readonly hits: number
  readonly rollup: number
  readonly daily: number
  readonly referrals: number
}

export interface PagesResult {
  readonly rows: ReadonlyArray<PageRow>
  readonly total: number
  readonly firstRollupDay?: string | null
}

export interface AgentsRepoShape {
  /** Crawler hits per (day, bot, status) in [from, to], filtered. */
  readonly daily: (accountId: number, brandId: number, from: string, to: string, filter: CrawlerFilter) => Effect.Effect<ReadonlyArray<DailyRow>>
  /** The same hits of [from, to], filtered, summed for GET /agents (DashboardFiguresRow). */
  readonly dashboardFigures: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    filter: CrawlerFilter
  ) => Effect.Effect<DashboardFiguresRow>
  /**
   * One page of the per-path list and the number of paths matching; the spans it reads end `query.to`
   * (ensureSpans). When one statement answered it, that statement also read the brand's first rollup
   * day (`firstRollupDay`, as the method of that name): the reads that need both ask once.
   */
  readonly pages: (accountId: number, brandId: number, query: PagesQuery) => Effect.Effect<PagesResult>
  /** AI referrals per (day, engine, landing path) in [from, to]. */
  readonly referrals: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<ReferralCount>>
  /**
   * Paths of the range with at least `minHits` hits of which at least `minErrorPercent`% have status >= 400,
   * most errors first, then path (byte order); at most `limit`. The figures of the unfiltered pages list.
   */
  readonly errorPaths: (accountId: number, brandId: number, query: ErrorPathsQuery) => Effect.Effect<ReadonlyArray<PathErrorsRow>>
  /** Hits per (path, bot, status) of the given paths in [from, to] (the rollup). */
  readonly pathStatuses: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    paths: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<PathStatusRow>>
  /** Per bot of [from, to]: hits and spoofed hits (crawler_daily, as GET /agents's by_bot with and without verification=spoofed). */
  readonly botVerdicts: (accountId: number, brandId: number, from: string, to: string) => Effect.Effect<ReadonlyArray<BotVerdictRow>>
  /**
   * Hits of one stored path per (bot, verdict) of [from, to] under a crawler filter, with their errors and
   * latest hit: the bots of one page (GET /agents/pages/bots). Reads crawler_rollup, the table the pages
   * list's figures are built from, so the sums equal that path's row of the list.
   */
  readonly pageBotVerdicts: (
    accountId: number,
    brandId: number,
    from: string,
    to: string,
    path: string,
    filter: CrawlerFilter
  ) => Effect.Effect<ReadonlyArray<PageBotVerdictRow>>
  /** The first day the brand's rollup holds, or null when it holds nothing. */
  readonly firstRollupDay: (accountId: number, brandId: number) => Effect.Effect<string | null>
  /**
   * Makes the brand's 7/30/90-day spans end `today`: "current" when they already did, "rolled" when
   * the windows were moved forward (days leaving subtracted, new days added), "rebuilt" when rebuilt
   * from the rollup (no spans yet, a gap of 90 days or more, today before their day, or the check
   * after rolling failed). docs/agents.md. After a rebuild, span tables that have more than doubled
   * since their statistics were taken are analyzed (a new database's plans otherwise see them empty).
   */
  readonly ensureSpans: (accountId: number, brandId: number, today: string) => Effect.Effect<SpanUpdate>
  /** Brands whose span rows end before `today`. */
  readonly staleSpans: (today: string) => Effect.Effect<ReadonlyArray<{ readonly accountId: number; readonly brandId: number }>>
  /** Deletes rollup rows of days before `rollupBefore` (raw hits and referrals go by partition: TimePartitions). */
  readonly sweep: (rawBefore: Date, rollupBefore: string) => Effect.Effect<SweepResult>
  /**
   * Folds up to `limit` queued hits into the rollups and spans, in one transaction that also deletes
   * them from the queue (docs/performance.md). null when another process is folding (its lock is
   * taken: the caller tries again later); else the number of hits folded.
   */
  readonly fold: (limit: number) => Effect.Effect<number | null>
  /** Whether any hit waits in the queue (one probe). */
  readonly queued: Effect.Effect<boolean>
  /**
   * Upkeep of what the folds churn, run by the aggregator now and then: a vacuum of the queue (every
   * fold deletes its rows) and of the per-path spans (every fold leaves a dead version of each row it
   * updates: its hits are indexed, so no update is made in place), whose dead rows a read or a fold
   * would scan until autovacuum, which looks once a minute, comes; and fresh statistics for the rollup
   * and span tables that have more than doubled since theirs were taken (the plans of a new brand's
   * first minutes otherwise see empty tables).
   */
  readonly upkeep: Effect.Effect<void>
}

export class AgentsRepo extends Context.Tag("AgentsRepo")<AgentsRepo, AgentsRepoShape>() {}

/** Normalised folder -> the path condition's parts: "/" means a path with no second slash. */
export const folderPrefix = (folder: string) => (folder === "/" ? null : `/${folder}/`)

export const AgentsRepoLive = Layer.effect(
  AgentsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The aggregator's folds and upkeep: connections of their own, never queued behind requests.
    const background = yield* BackgroundSql

    /**
     * Fresh statistics for those of `tables` that have more than doubled in size since theirs were
     * taken. A generic plan made while a table looked nearly empty (a new database, a brand's first
     * spans) reads it in full, and its pooled connection keeps it until the table's statistics change;
     * autovacuum may take a minute to come. The size is the file's, known at once (the live-row
     * counts reach the statistics up to a second after a commit).
     */
    const analyzeGrown = (client: SqlClient.SqlClient, tables: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const grown = yield* client`
          select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = current_schema() and c.relkind = 'r' and c.relname in ${client.in(tables)}
            and pg_relation_size(c.oid) > current_setting('block_size')::bigint * (2 * greatest(c.relpages, 0) + 8)`.pipe(rows(GrownRow))
        for (const table of tables) {
          if (grown.some((row) => row.name === table)) yield* client.unsafe(`analyze ${table}`)
        }
      })

    const crawlerClauses = (filter: CrawlerFilter) => [
      ...(filter.bot === null ? [] : [sql`bot = ${filter.bot}`]),
      ...(filter.vendor === null ? [] : [sql`vendor = ${filter.vendor}`]),
      ...(filter.kind === null ? [] : [sql`kind = ${filter.kind}`]),
      ...(filter.verification == null ? [] : [sql`verification = ${filter.verification}`])
    ]

    const pathClauses = (query: PagesQuery) => {
      const out = []
      if (query.folder !== null) {
        const prefix = folderPrefix(query.folder)
        out.push(prefix === null ? sql`strpos(substr(path, 2), '/') = 0` : sql`left(path, ${prefix.length}) = ${prefix}`)
      }
      if (query.q !== null) out.push(sql`strpos(lower(path), ${query.q.toLowerCase()}) > 0`)
      return out
    }

    /**
     * The crawler_span columns giving a query's hits, errors and latest hit, or null when the spans
     * cannot answer it: they keep no verdicts (a verification filter reads the daily rollup,
     * docs/verification.md), only 7/30/90-day windows, and no exact status codes.
     */
    const spanColumns = (query: PagesQuery) => {
      const status = query.status
      if (query.filter.verification != null) return null
      if (!(query.days === 7 || query.days === 30 || query.days === 90) || (status !== null && status._tag === "code")) return null
      const [h, e, ls] = status === null
        ? ["hits", "errors", "last_seen"]
        : status._tag === "ok"
        ? ["oks", "0", "last_ok"]
        : ["errors", "errors", "last_error"]
      return { h, e, ls, where: status === null ? [] : [sql`${sql.literal(h)} > 0`] }
    }

    /**
     * The read side of the aggregator (docs/performance.md): every rollup a read uses is the folded rows
     * plus the brand's hits still in crawler_fold_queue, taken in the same statement, so a read counts
     * every hit a delivery stored the moment the delivery is answered, and each hit once (a fold moves
     * hits from the queue to the rollups in one transaction). A read of the rollups gets its rows from
     * these blocks (crawler_rollup_exact and crawler_daily_exact are the same as views).
     */

    /** crawler_rollup of the brand as a read sees it; a key may come twice (folded and queued): sum it. */
    const liveRollup = (accountId: number, brandId: number) =>
      sql`
        select account_id, brand_id, day, path, bot, status, verification, vendor, kind, hits, last_seen from crawler_rollup
        where account_id = ${accountId} and brand_id = ${brandId}
        union all
        select account_id, brand_id, (ts at time zone 'UTC')::date, path, bot, status, verification, vendor, kind, 1, ts
        from crawler_fold_queue where account_id = ${accountId} and brand_id = ${brandId}`

    /** crawler_daily of the brand as a read sees it (the queued hits counted per key); a key may come twice: sum it. */
    const liveDaily = (accountId: number, brandId: number, where: ReadonlyArray<Statement.Fragment>, columns: Statement.Fragment) =>
      sql`
        select ${columns} from crawler_daily
        where ${sql.and([sql`account_id = ${accountId}`, sql`brand_id = ${brandId}`, ...where])}
        union all
        select ${columns} from (
          select day, bot, status, verification, min(vendor) as vendor, min(kind) as kind, count(*)::int as hits
          from (
            select (ts at time zone 'UTC')::date as day, bot, status, verification, vendor, kind from crawler_fold_queue
            where account_id = ${accountId} and brand_id = ${brandId}
          ) q
          where ${sql.and(where)}
          group by day, bot, status, verification
        ) q`

    /** The day the brand's spans end (null: no spans yet), as a scalar subquery. */
    const spansEnd = (accountId: number, brandId: number) =>
      sql`(select as_of from crawler_span_state where account_id = ${accountId} and brand_id = ${brandId})`

    /**
     * The brand's queued hits of the `days`-day window the spans hold, one row per (path, bot): h = hits,
     * o = status 200-399, e = status >= 400, and the latest of each (ls, lo, le). `where`: more conditions
     * on the queue's columns.
     */
    const queuedSpan = (accountId: number, brandId: number, days: number, where: ReadonlyArray<Statement.Fragment>) =>
      sql`
        select path, bot, count(*)::int as h, (count(*) filter (where status between 200 and 399))::int as o,
               (count(*) filter (where status >= 400))::int as e, max(ts) as ls,
               max(ts) filter (where status between 200 and 399) as lo, max(ts) filter (where status >= 400) as le
        from crawler_fold_queue
        where ${
        sql.and([
          sql`account_id = ${accountId}`,
          sql`brand_id = ${brandId}`,
          sql`(ts at time zone 'UTC')::date between ${spansEnd(accountId, brandId)} - ${days - 1}::int and ${spansEnd(accountId, brandId)}`,
          ...where
        ])
      }
        group by path, bot`

    /** The queued hits a status filter keeps: the spans' oks (200-399) or errors (>= 400). */
    const queuedStatus = (status: StatusFilter | null) =>
      status === null ? [] : status._tag === "ok" ? [sql`status between 200 and 399`] : [sql`status >= 400`]

    /** Matching hits per (path, bot): h = hits, e = errors among them, ls = the latest. */
    const matching = (accountId: number, brandId: number, query: PagesQuery & { readonly paths?: ReadonlyArray<string> }) => {
      const where = [sql`account_id = ${accountId}`, sql`brand_id = ${brandId}`, ...crawlerClauses(query.filter), ...pathClauses(query)]
      if (query.paths !== undefined) where.push(sql`path = any(${query.paths}::text[])`)
      const status = query.status
      const span = spanColumns(query)
      if (span !== null) {
        // The span rows (ensureSpans made them end today) and the queued hits of their window.
        const queued = queuedSpan(accountId, brandId, query.days, [...where.slice(2), ...queuedStatus(status)])
        return sql`
          select path, bot, sum(h) as h, sum(e) as e, max(ls) as ls from (
            select path, bot, ${sql.literal(span.h)} as h, ${sql.literal(span.e)} as e, ${sql.literal(span.ls)} as ls
            from ${spanWindow(accountId, brandId, query.days)} s where ${sql.and([...where.slice(2), ...span.where])}
            union all
            select path, bot, h, e, ls from (${queued}) q
          ) s
          group by path, bot`
      }
      if (status !== null) {
        where.push(
          status._tag === "ok"
            ? sql`status between 200 and 399`
            : status._tag === "error"
            ? sql`status >= 400`
            : sql`status = ${status.code}`
        )
      }
      return sql`
        select path, bot, sum(hits) as h, coalesce(sum(hits) filter (where status >= 400), 0) as e, max(last_seen) as ls
        from (${liveRollup(accountId, brandId)}) r where day between ${query.from}::date and ${query.to}::date and ${sql.and(where)}
        group by path, bot`
    }

    /**
     * Without a crawler filter (and without one exact status code) a 7/30/90-day list reads the
     * per-path span (crawler_page_span, one row per path): the same figures as summing the
     * (path, bot) span rows, uniques counted at fold and rebuild. null when it cannot answer.
     * h, e, u, ls: the columns of crawler_page_span (and of `touched`, its rows with the queued hits
     * added) giving the query's hits, errors, distinct bots and latest hit.
     */
    const perPathSpan = (query: PagesQuery) => {
      const status = query.status
      const f = query.filter
      if (f.bot !== null || f.vendor !== null || f.kind !== null || f.verification != null) return null
      if (!(query.days === 7 || query.days === 30 || query.days === 90) || (status !== null && status._tag === "code")) return null
      const [h, e, u, ls] = status === null
        ? ["hits", "errors", "uniques", "last_seen"]
        : status._tag === "ok"
        ? ["oks", "0", "ok_uniques", "last_ok"]
        : ["errors", "errors", "error_uniques", "last_error"]
      const columns = sql.literal(`path, ${h} as hits, ${e} as errors, ${u} as uniques, ${ls} as last_seen`)
      const where = status === null ? [...pathClauses(query)] : [...pathClauses(query), sql`${sql.literal(h)} > 0`]
      // A queued (path, bot) that is a new distinct bot of the path for the query's uniques (qp's u, ou, eu).
      const newBot = status === null ? newBotOf.all : status._tag === "ok" ? newBotOf.ok : newBotOf.error
      return { columns, where, newBot }
    }

    /**
     * When a queued (path, bot) adds a distinct bot to its path, given its span row `s` (none: all null):
     * of its hits, of its oks, of its errors.
     */
    const newBotOf = {
      all: sql.literal("s.hits is null"),
      ok: sql.literal("qd.o > 0 and coalesce(s.oks, 0) = 0"),
      error: sql.literal("qd.e > 0 and coalesce(s.errors, 0) = 0")
    }

    /** The span row of a queued (path, bot) `qd`, as `s`, for newBotOf. */
    const spanOfQueued = (accountId: number, brandId: number, days: number) =>
      // One index probe per queued (path, bot), whatever the plan: as a join, a generic plan expecting
      // a row or two from qd filtered all the brand's span rows for each queued row. The limit keeps
      // the subquery from being flattened back into such a join (the key is unique: one row at most).
      sql`left join lateral (
            select w.hits, w.oks, w.errors from ${spanWindow(accountId, brandId, days)} w
            where w.path = qd.path and w.bot = qd.bot
            limit 1
          ) s on true`

    /**
     * The rows of a span table of the brand's `days`-day window (those with hits in it), with that
     * window's columns under their plain names (hits, oks, ..., last_error) beside `keys`. A subquery
     * the planner pulls up: a read's order and conditions on those names go to the window's own
     * columns (and, for the page spans, the window's by-hits index).
     */
    const windowOf = (
      table: "crawler_span" | "crawler_page_span",
      keys: string,
      columns: ReadonlyArray<string>,
      accountId: number,
      brandId: number,
      days: number
    ) => {
      // Every caller reads a window the spans hold (spanColumns, perPathSpan, errorPaths' 7/30/90): a defect otherwise.
      if (!WINDOWS.some((w) => w === days)) throw new Error(`no span window of ${days} days`)
      const list = columns.map((c) => `${c}_${days} as ${c}`).join(", ")
      return sql`(select ${sql.literal(keys)}, ${sql.literal(list)} from ${sql.literal(table)}
                  where account_id = ${accountId} and brand_id = ${brandId} and ${sql.literal(`hits_${days}`)} > 0)`
    }

    /** The crawler_span rows (path, bot, vendor, kind) of a window: windowOf. */
    const spanWindow = (accountId: number, brandId: number, days: number) =>
      windowOf("crawler_span", "path, bot, vendor, kind", [...SPAN_SUMS, ...SPAN_TIMES], accountId, brandId, days)

    /** The crawler_page_span rows (path) of a window: windowOf. */
    const pageWindow = (accountId: number, brandId: number, days: number) =>
      windowOf("crawler_page_span", "path", [...PAGE_SUMS, ...PAGE_TIMES], accountId, brandId, days)

    /**
     * The per-path figures of a 7/30/90-day window with the brand's queued hits added, as CTEs
     * (`qd`: queued hits per (path, bot); `qp`: what they add per path; `touched`: the page span rows
     * of those paths with them added; `others`: the page span rows of the other paths), for a
     * statement that goes on with ", ...". A queued (path, bot) with no span row is a new distinct
     * bot of the path (of its oks, its errors, when the span row had none). Finding that takes a probe
     * of the span rows per queued (path, bot), 40% of the statement with a few hundred queued: with
     * `newBots` "listed" it is left out of `touched` (its uniques are the page span's alone), and the
     * statement adds it for the paths it lists (`queuedOfPage`); "all" when the uniques order the list.
     */
    const liveSpanCtes = (
      accountId: number,
      brandId: number,
      days: number,
      pathWhere: ReadonlyArray<Statement.Fragment>,
      newBots: "all" | "listed"
    ) =>
      sql`
        with qd as (${queuedSpan(accountId, brandId, days, pathWhere)}
        ), qp as (
          select qd.path, sum(qd.h)::int as h, sum(qd.o)::int as o, sum(qd.e)::int as e, ${
        newBots === "all"
          ? sql`(count(*) filter (where ${newBotOf.all}))::int as u, (count(*) filter (where ${newBotOf.ok}))::int as ou,
                 (count(*) filter (where ${newBotOf.error}))::int as eu,`
          : sql`0 as u, 0 as ou, 0 as eu,`
      }
                 max(qd.ls) as ls, max(qd.lo) as lo, max(qd.le) as le
          from qd ${newBots === "all" ? spanOfQueued(accountId, brandId, days) : sql``}
          group by qd.path
        ), touched as (
          -- The page span rows of the queued paths, taken in one scan with the paths in a hash ("in (...)
          -- is true" stays a hashed subplan, where a bare "in" becomes a join; "= any(array(...))" compared
          -- each row with every queued path: 7 of a read's 12 ms with 400 queued paths), so whichever
          -- index the planner picks, the brand's window is read at most once; the queued figures are added
          -- by grouping, not a join: a join of the two, planned for a row or two a side, was a nested loop
          -- probing the window once per queued path.
          select path, sum(hits)::int as hits, sum(oks)::int as oks, sum(errors)::int as errors, sum(uniques)::int as uniques,
                 sum(ok_uniques)::int as ok_uniques, sum(error_uniques)::int as error_uniques, max(last_seen) as last_seen,
                 max(last_ok) as last_ok, max(last_error) as last_error, bool_or(spanned) as spanned
          from (
            select path, h as hits, o as oks, e as errors, u as uniques, ou as ok_uniques, eu as error_uniques,
                   ls as last_seen, lo as last_ok, le as last_error, false as spanned
            from qp
            union all
            -- Not read at all when nothing is queued (a gate evaluated once, before the scan).
            select path, hits, oks, errors, uniques, ok_uniques, error_uniques, last_seen, last_ok, last_error, true
            from ${pageWindow(accountId, brandId, days)} w
            where exists (select from qp) and (path in (select path from qp)) is true
          ) t
          group by path
        )`

    /**
     * The queued (path, bot) rows of the paths `page` lists, grouped once per path as `page_queued`
     * (listed_path, bots, n): `bots`, the names of those with hits of the status asked (queuedBotsOf); `n`, with
     * liveSpanCtes' newBots "listed", the new distinct bots among them (`newBot`, of perPathSpan: a probe
     * per queued (path, bot) of those paths), else 0. Materialized: inlined into the lookup of each listed
     * path, it scanned every queued row of the brand per path.
     */
    const queuedOfPage = (accountId: number, brandId: number, query: PagesQuery, newBot: Statement.Fragment | null) =>
      sql`
        -- Not named path: the statement's order by reads path from the page it is joined to.
        select qd.path as listed_path, array_agg(qd.bot) filter (where ${queuedBotsOf(query)}) as bots,
               ${newBot === null ? sql`0` : sql`(count(*) filter (where ${newBot}))::int`} as n
        from qd ${newBot === null ? sql`` : spanOfQueued(accountId, brandId, query.days)}
        where (qd.path in (select path from page)) is true
        group by qd.path`

    /** Of a window's page span rows (pageWindow), those of the paths without queued hits (`qp` of liveSpanCtes). */
    const untouched = sql`path not in (select path from qp)`

    /**
     * The bot names of one page of paths. From the spans, one index probe per path: a filter on the
     * path list over all the brand's span rows was the plan whenever the statistics were stale.
     */
    const botsOfPaths = (accountId: number, brandId: number, query: PagesQuery, paths: ReadonlyArray<string>) => {
      const span = spanColumns(query)
      if (span === null) {
        return sql`
          select path, json_agg(bot order by bot collate "C") as bots
          from (${matching(accountId, brandId, { ...query, paths })}) m group by path`.pipe(rows(PageBotsRow))
      }
      const queued = queuedSpan(accountId, brandId, query.days, [
        ...crawlerClauses(query.filter),
        sql`path = any(${paths}::text[])`,
        ...queuedStatus(query.status)
      ])
      return sql`
        with qd as (${queued})
        select p.path, ${spanBotsOf(accountId, brandId, query, sql`p.path`)},
               array_to_json(array(select qd.bot from qd where qd.path = p.path and ${queuedBotsOf(query)})) as queued_bots
        from unnest(${paths}::text[]) as p(path)`.pipe(rows(QueuedBotsRow), Effect.map((rows) => rows.map(withQueuedBots)))
    }

    /**
     * `bots`: the sorted bot names of the span rows of one path (`path`, a column of the enclosing
     * query). The bot names of its queued hits come beside them as `queued_bots` (from `qd`, a CTE of
     * the enclosing statement: queuedSpan of the same filters, where queuedBotsOf holds), and
     * withQueuedBots merges the two (a union in the statement cost a sort per listed path).
     */
    const spanBotsOf = (accountId: number, brandId: number, query: PagesQuery, path: Statement.Fragment) => {
      // The crawler filter's and the status' columns are the window's own (unqualified, they name s's first).
      const where = [sql`s.path = ${path}`, ...crawlerClauses(query.filter), ...(spanColumns(query)?.where ?? [])]
      return sql`array_to_json(array(
        select s.bot from ${spanWindow(accountId, brandId, query.days)} s where ${sql.and(where)} order by s.bot collate "C"
      )) as bots`
    }

    /** Which queued (path, bot) rows of `qd` count among a path's bots: those with hits of the status asked. */
    const queuedBotsOf = (query: PagesQuery) => {
      const status = query.status
      return status === null ? sql`true` : status._tag === "ok" ? sql`qd.o > 0` : sql`qd.e > 0`
    }

    /**
     * The brand's first rollup day (a one-column query). "Order by day limit 1" walks the
     * (account_id, brand_id, day, ...) key to its first entry; min(day) was planned as an aggregate
     * over every row of the brand whenever the statistics were stale. Queued hits count too.
     */
    const firstRollupDayQuery = (accountId: number, brandId: number) =>
      sql`
        select to_char(least(
          (select crawler_rollup.day from crawler_rollup
           where account_id = ${accountId} and brand_id = ${brandId} order by crawler_rollup.day limit 1),
          (select min((ts at time zone 'UTC')::date) from crawler_fold_queue where account_id = ${accountId} and brand_id = ${brandId})
        ), 'YYYY-MM-DD') as day`

    const orderBy = (sort: PageSort, dir: "asc" | "desc") =>
      sql.literal(sort === "path" ? `path collate "C" ${dir}` : `${sort} ${dir}, path collate "C" asc`)

    const SPANS: ReadonlyArray<number> = WINDOWS

    /**
     * The windows `spans` of the brand, from the rollup days they cover (ending today): one pass over
     * the longest window's rollup rows, each (path, bot) group giving its columns of every window asked
     * (age = days before today; a window of N days holds ages 0 to N - 1). The other windows' columns
     * are left as they are (a row new here has none of their hits: 0 and null), so a rebuild of some
     * windows goes before the roll of the others (ensureSpans).
     */
    const rebuildSpans = (accountId: number, brandId: number, today: string, spans: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const longest = Math.max(...spans)
        const columns = sql.literal(spanWindowColumns(spans))
        const ok = "and status between 200 and 399"
        const err = "and status >= 400"
        const figures = sql.literal(spans.flatMap((w) => [
          `coalesce(sum(hits) filter (where age < ${w}), 0)::int`,
          `coalesce(sum(hits) filter (where age < ${w} ${ok}), 0)::int`,
          `coalesce(sum(hits) filter (where age < ${w} ${err}), 0)::int`,
          `max(last_seen) filter (where age < ${w})`,
          `max(last_seen) filter (where age < ${w} ${ok})`,
          `max(last_seen) filter (where age < ${w} ${err})`
        ]).join(", "))
        if (spans.length === SPANS.length) {
          yield* sql`delete from crawler_span where account_id = ${accountId} and brand_id = ${brandId}`
        } else {
          const cleared = sql.literal(spans.flatMap((w) => [
            ...SPAN_SUMS.map((c) => `${c}_${w} = 0`),
            ...SPAN_TIMES.map((c) => `${c}_${w} = null`)
          ]).join(", "))
          yield* sql`update crawler_span set ${cleared} where account_id = ${accountId} and brand_id = ${brandId}`
        }
        // Hash aggregation of (paths x bots) groups with 18 aggregates: room to stay in memory.
        yield* sql`set local work_mem = '64MB'`
        yield* sql`
          insert into crawler_span (brand_id, path, bot, account_id, vendor, kind, ${columns})
          select ${brandId}, path, bot, min(account_id), min(vendor), min(kind), ${figures}
          from (
            select r.*, (${today}::date - r.day) as age from crawler_rollup r
            where r.account_id = ${accountId} and r.brand_id = ${brandId}
              and r.day between ${today}::date - ${longest - 1}::int and ${today}::date
          ) r
          group by path, bot
          on conflict (account_id, brand_id, path, bot) do update set ${
          sql.literal(spans.flatMap((w) => [...SPAN_SUMS, ...SPAN_TIMES].map((c) => `${c}_${w} = excluded.${c}_${w}`)).join(", "))
        }`
      })

    /**
     * Moves the windows `spans` from ending `asOf` to ending `today` (0 < today - asOf < each span):
     * subtracts the rollup days that left each window, adds the days after asOf, drops the rows left
     * without hits in the 90 days. The spans held exactly their windows' hits (the rebuild/ingestion
     * invariant), so they still do. A window's last_seen (last_ok, last_error) is a maximum, and the
     * days leaving are older than every day staying or added: it only leaves with all of the window's
     * (ok, error) hits, when it becomes null. The 90-day window is always among `spans` (a gap of 90
     * days or more rebuilds every window), and it holds the others: a row without hits in it has none.
     */
    const rollSpans = (accountId: number, brandId: number, asOf: string, today: string, spans: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const ok = "and status between 200 and 399"
        const err = "and status >= 400"
        // Per window, the days leaving it, asOf - (N - 1) to today - N: ages (days before today) N to gap + N - 1.
        // Only those days are read (gap days a window, through the rollup's day key), not the days between.
        const gap = Math.round((dayMs(today) - dayMs(asOf)) / DAY_MS)
        const leaving = (w: number) => `age between ${w} and ${gap + w - 1}`
        const leavingDays = [...new Set(spans.flatMap((w) => dayList(isoDay(dayMs(asOf) - (w - 1) * DAY_MS), gap)))]
        const left = sql.literal(spans.flatMap((w) => [
          `coalesce(sum(hits) filter (where ${leaving(w)}), 0)::int as hits_${w}`,
          `coalesce(sum(hits) filter (where ${leaving(w)} ${ok}), 0)::int as oks_${w}`,
          `coalesce(sum(hits) filter (where ${leaving(w)} ${err}), 0)::int as errors_${w}`
        ]).join(", "))
        const subtracted = sql.literal(spans.flatMap((w) => [
          ...SPAN_SUMS.map((c) => `${c}_${w} = c.${c}_${w} - s.${c}_${w}`),
          `last_seen_${w} = case when c.hits_${w} = s.hits_${w} then null else c.last_seen_${w} end`,
          `last_ok_${w} = case when c.oks_${w} = s.oks_${w} then null else c.last_ok_${w} end`,
          `last_error_${w} = case when c.errors_${w} = s.errors_${w} then null else c.last_error_${w} end`
        ]).join(", "))
        yield* sql`
          update crawler_span c set ${subtracted}
          from (
            select path, bot, ${left}
            from (
              select r.*, (${today}::date - r.day) as age from crawler_rollup r
              where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day = any(${leavingDays}::date[])
            ) r
            group by path, bot
          ) s
          where c.account_id = ${accountId} and c.brand_id = ${brandId} and c.path = s.path and c.bot = s.bot`
        // The days after asOf are in every window rolled: the same figures added to each.
        const added = sql.literal(spans.flatMap(() => [
          "sum(hits)::int",
          `coalesce(sum(hits) filter (where true ${ok}), 0)::int`,
          `coalesce(sum(hits) filter (where true ${err}), 0)::int`,
          "max(last_seen)",
          `max(last_seen) filter (where true ${ok})`,
          `max(last_seen) filter (where true ${err})`
        ]).join(", "))
        yield* sql`
          insert into crawler_span (brand_id, path, bot, account_id, vendor, kind, ${sql.literal(spanWindowColumns(spans))})
          select ${brandId}, path, bot, min(account_id), min(vendor), min(kind), ${added}
          from crawler_rollup
          where account_id = ${accountId} and brand_id = ${brandId} and day > ${asOf}::date and day <= ${today}::date
          group by path, bot
          on conflict (account_id, brand_id, path, bot) do update set ${sql.literal(spanWindowUpdate(spans))}`
        // Last: a row a rebuild of the shorter windows just made has no 90-day figures until the days added.
        yield* sql`delete from crawler_span where account_id = ${accountId} and brand_id = ${brandId} and hits_90 = 0`
      })

    /** crawler_page_span of the brand from its crawler_span rows (same windows, summed over bots). */
    const rebuildPageSpans = (accountId: number, brandId: number) =>
      Effect.gen(function*() {
        yield* sql`delete from crawler_page_span where account_id = ${accountId} and brand_id = ${brandId}`
        yield* sql`
          with ins as (
            insert into crawler_page_span (brand_id, path, account_id, ${sql.literal(PAGE_WINDOW_COLUMNS)})
            select brand_id, path, min(account_id), ${sql.literal(PAGE_REBUILD_LIST)}
            from crawler_span where account_id = ${accountId} and brand_id = ${brandId} group by brand_id, path
            returning hits_7, hits_30, hits_90
          )
          -- The windows' path counts (0028), with their rows.
          update crawler_span_state set pages_7 = (select count(*) from ins where hits_7 > 0),
            pages_30 = (select count(*) from ins where hits_30 > 0), pages_90 = (select count(*) from ins where hits_90 > 0)
          where account_id = ${accountId} and brand_id = ${brandId}`
      })

    /**
     * A guard after moving the spans: per window and bot, hits, oks and errors of the spans equal
     * those of crawler_daily over the window's days (a few thousand rows; about a tenth of a second).
     */
    const spansAgree = (accountId: number, brandId: number, today: string) =>
      Effect.map(
        sql`
          select exists (
            select 1
            from (select v.span, s.bot, sum(v.h)::bigint as h, sum(v.o)::bigint as o, sum(v.e)::bigint as e
                  from crawler_span s cross join lateral (values ${sql.literal(SPAN_WINDOW_ROWS)}) as v(span, h, o, e)
                  where s.account_id = ${accountId} and s.brand_id = ${brandId} and v.h > 0 group by v.span, s.bot) a
            full join (
              select w.span, d.bot, sum(d.hits)::bigint as h,
                     coalesce(sum(d.hits) filter (where d.status between 200 and 399), 0)::bigint as o,
                     coalesce(sum(d.hits) filter (where d.status >= 400), 0)::bigint as e
              from crawler_daily d cross join (values (7), (30), (90)) as w(span)
              where d.account_id = ${accountId} and d.brand_id = ${brandId}
                and d.day between ${today}::date - (w.span - 1) and ${today}::date
              group by w.span, d.bot
            ) b on a.span = b.span and a.bot = b.bot
            where a.h is distinct from b.h or a.o is distinct from b.o or a.e is distinct from b.e
          ) as differ`.pipe(singleRow(DifferRow)),
        (row) => !row.differ
      )

    /**
     * The bots of one page: its rollup rows of the range summed per (bot, verdict). One index probe per
     * day of the (account_id, brand_id, day, path, ...) key, fenced as in pathStatuses (a range of days
     * filtered by path would read every rollup row of the brand's window). The crawler filter's columns
     * are the rollup row's own (the unqualified names inside the lateral subquery).
     */
    const pageBotVerdictsQuery = (accountId: number, brandId: number, from: string, to: string, path: string, filter: CrawlerFilter) => {
      const page = [sql`account_id = ${accountId}`, sql`brand_id = ${brandId}`, sql`path = ${path}`, ...crawlerClauses(filter)]
      return sql`
        select x.bot, min(x.vendor) as vendor, min(x.kind) as kind, x.verification, sum(x.hits)::int as hits,
               coalesce(sum(x.hits) filter (where x.status >= 400), 0)::int as errors, max(x.last_seen) as last_seen
        from (
          select r.bot, r.vendor, r.kind, r.verification, r.status, r.hits, r.last_seen
          from unnest(${dayList(from, (dayMs(to) - dayMs(from)) / DAY_MS + 1)}::date[]) as d(day)
          cross join lateral (
            select bot, vendor, kind, verification, status, hits, last_seen from crawler_rollup
            where ${sql.and([...page, sql`day = d.day::date`])}
            offset 0
          ) r
          union all
          -- The page's hits still queued for the aggregator, read once (a read counts them the moment they are stored).
          select bot, vendor, kind, verification, status, 1, ts from crawler_fold_queue
          where ${sql.and([...page, sql`(ts at time zone 'UTC')::date between ${from}::date and ${to}::date`])}
        ) x
        group by x.bot, x.verification`
    }

    const repo: AgentsRepoShape = {
      daily: (accountId, brandId, from, to, filter) =>
        // A measured hot path, so these rows keep the typed cast: at 90 days a brand has some 11,000
        // (day, bot, status) rows (bench/agents.ts: 25 bots, 5 status codes), and decoding them with
        // DailyRow costs 6 to 12 ms (bench/row-decode.ts, 0.5 to 1.1 µs a row), a fifth or more of
        // GET /agents' 28.5 ms median (docs/agents.md). Every column's type is fixed by the SQL: the
        // day by to_char, status smallint, hits integer, the rest text.
        // The queued hits come as rows of their own (a key may come twice): every reader sums them.
        sql<DailyRow>`${
          liveDaily(
            accountId,
            brandId,
            [sql`day between ${from}::date and ${to}::date`, ...crawlerClauses(filter)],
            sql`to_char(day, 'YYYY-MM-DD') as day, bot, vendor, kind, status, verification, hits`
          )
        }`.pipe(Effect.orDie),

      // One pass over the range's rows, the two lists told apart by grouping(); the sums stay bigint (a
      // bot's hits over 90 days may pass an int's range; json carries them as numbers). array_agg's of one
      // query level see the rows in the same order, so the arrays of a list stay parallel. Measured
      // against the rows summed in the server and against a group-by per breakdown:
      // docs/performance.md.
      dashboardFigures: (accountId, brandId, from, to, filter) =>
        sql`
          with g as (
            select grouping(day, kind, bot, vendor, status, verification) as g, to_char(day, 'YYYY-MM-DD') as day,
                   kind, bot, vendor, status, verification, sum(hits) as hits
            from (${
          liveDaily(
            accountId,
            brandId,
            [sql`day between ${from}::date and ${to}::date`, ...crawlerClauses(filter)],
            sql`day, bot, vendor, kind, status, verification, hits`
          )
        }) d
            group by grouping sets ((day, kind), (bot, vendor, kind, status, verification))
          )
          select ${sql.literal(DASHBOARD_FIGURES_COLUMNS)} from g`.pipe(singleRow(DashboardFiguresRow), Effect.orDie),

      pages: (accountId, brandId, query) =>
        Effect.gen(function*() {
          const perPath = perPathSpan(query)
          if (perPath !== null) {
            // One statement: a page of the window's paths, their total, the bot names of that page, the
            // day the spans end and the brand's first rollup day, all from one snapshot. At least one row
            // comes back (the figures without a path when the page is empty: past the last page, or a
            // brand without hits in the window), so the day the spans end is always known. Spans that
            // end before today are moved forward and the page read again.
            // The paths with queued hits (`touched`) come with them added; the page of the others is read
            // in the list's order (the by-hits index) to offset + limit rows, enough for any page since
            // only they and the touched paths can be on it.
            // Sorted by distinct bots, every queued path needs its new ones before the sort; else only
            // those of the page (queuedOfPage).
            const newBots = query.sort === "uniques" ? "all" : "listed"
            const window = pageWindow(accountId, brandId, query.days)
            const uniques = newBots === "listed" ? sql`page.uniques + coalesce(q.n, 0) as uniques` : sql`page.uniques`
            // Every path of the window: its count (0028) and the queued paths it has no row for yet; when
            // the query filters paths, the window's rows that match and are not queued, and the touched.
            const total = perPath.where.length === 0
              ? sql`coalesce((select ${sql.literal(`pages_${query.days}`)} from crawler_span_state
                              where account_id = ${accountId} and brand_id = ${brandId}), 0)
                    + (select count(*)::int from touched where not spanned)`
              : sql`(select count(*)::int from ${window} w where ${sql.and([untouched, ...perPath.where])})
                    + (select count(*)::int from touched where ${sql.and(perPath.where)})`
            const read = sql`
              ${liveSpanCtes(accountId, brandId, query.days, pathClauses(query), newBots)}, page as (
                select path, hits, errors, uniques, last_seen from (
                  (select ${perPath.columns} from ${window} w
                   where ${sql.and([untouched, ...perPath.where])}
                   order by ${orderBy(query.sort, query.dir)} limit ${query.offset + query.limit})
                  union all
                  select ${perPath.columns} from touched where ${sql.and(perPath.where)}
                ) m
                order by ${orderBy(query.sort, query.dir)} limit ${query.limit} offset ${query.offset}
              ), meta as (
                select ${total} as total,
                       (select to_char(as_of, 'YYYY-MM-DD') from crawler_span_state
                        where account_id = ${accountId} and brand_id = ${brandId}) as "asOf",
                       (${firstRollupDayQuery(accountId, brandId)}) as "firstDay"
              ), page_queued as materialized (${queuedOfPage(accountId, brandId, query, newBots === "listed" ? perPath.newBot : null)})
              select page.path, page.hits, page.errors, ${uniques}, page.last_seen, meta.total,
                     ${spanBotsOf(accountId, brandId, query, sql`page.path`)}, coalesce(array_to_json(q.bots), '[]') as queued_bots,
                     meta."asOf", meta."firstDay"
              from meta left join page on true left join page_queued q on q.listed_path = page.path
              order by ${orderBy(query.sort, query.dir)}`.pipe(
              // The figures' row alone (no path) when the page is empty; else the page's rows, each decoded
              // as one (a union schema decoded every row twice as slowly).
              Effect.flatMap((raw): Effect.Effect<PageRead> =>
                raw.length === 1 && Predicate.hasProperty(raw[0], "path") && raw[0].path === null
                  ? Effect.map(singleRow(PageReadMeta)(Effect.succeed(raw)), (meta) => ({ meta, page: [] }))
                  : Effect.map(rows(CurrentPageRow)(Effect.succeed(raw)), (page) => ({ meta: page[0], page }))
              )
            )
            let result = yield* read
            if (result.meta?.asOf !== query.to) {
              yield* repo.ensureSpans(accountId, brandId, query.to)
              result = yield* read
            }
            return {
              total: result.meta?.total ?? 0,
              rows: result.page.map(({ asOf: _, firstDay: __, total: ___, ...row }): PageRow => withQueuedBots(row)),
              firstRollupDay: result.meta?.firstDay ?? null
            }
          }
          // Crawler-filtered span rows must end today too.
          if (spanColumns(query) !== null) yield* repo.ensureSpans(accountId, brandId, query.to)
          // Figures of every path and one page of them; then the bot names of that page's paths only.
          const figures = yield* sql`
            with m as (${matching(accountId, brandId, query)})
            select path, sum(h)::int as hits, sum(e)::int as errors, count(*)::int as uniques, max(ls) as last_seen,
                   (count(*) over ())::int as total
            from m group by path
            order by ${orderBy(query.sort, query.dir)} limit ${query.limit} offset ${query.offset}`.pipe(rows(PageFiguresRow))
          const paths = figures.map((row) => row.path)
          const names = paths.length === 0 ? [] : yield* botsOfPaths(accountId, brandId, query, paths)
          const botsOf = new Map(names.map((row) => [row.path, row.bots]))
          const first = figures[0]
          // Past the last page (or nothing matches) the window gave no total: count on its own.
          const total = first !== undefined
            ? first.total
            : yield* sql`select count(distinct path)::int as n from (${matching(accountId, brandId, query)}) m`.pipe(countOf)
          return {
            total,
            rows: figures.map(({ total: _, ...row }): PageRow => ({ ...row, bots: botsOf.get(row.path) ?? [] }))
          }
        }).pipe(Effect.orDie),

      referrals: (accountId, brandId, from, to) =>
        sql`
          select to_char((ts at time zone 'UTC')::date, 'YYYY-MM-DD') as day, engine, path, count(*)::int as referrals
          from ai_referrals
          where account_id = ${accountId} and brand_id = ${brandId}
            and ts >= ${from}::date::timestamp at time zone 'UTC' and ts < (${to}::date + 1)::timestamp at time zone 'UTC'
          group by 1, 2, 3`.pipe(rows(ReferralCount), Effect.orDie),

      errorPaths: (accountId, brandId, query) =>
        Effect.gen(function*() {
          // The per-path spans (one row per path of the window), made to end today first, as the pages list does.
          yield* repo.ensureSpans(accountId, brandId, query.to)
          // With the queued hits of the window added (liveSpanCtes).
          return yield* sql`
            ${liveSpanCtes(accountId, brandId, query.days, [], "listed")}
            select path, hits, errors from (
              select path, hits, errors from ${pageWindow(accountId, brandId, query.days)} w where ${untouched}
              union all
              select path, hits, errors from touched
            ) p
            where hits >= ${query.minHits} and errors * 100 >= hits * ${query.minErrorPercent}
            order by errors desc, path collate "C" asc
            limit ${query.limit}`.pipe(rows(PathErrorsRow))
        }).pipe(Effect.orDie),

      pathStatuses: (accountId, brandId, from, to, paths) =>
        paths.length === 0
          ? Effect.succeed([])
          // One index probe per (day, path) of the (account_id, brand_id, day, path, ...) key: a range
          // of days filtered by path would read every rollup row of the brand's window. The lateral
          // subquery is fenced (offset 0) so that it stays a probe: joined as a plain join, the planner
          // hashed the whole window of the 5-million-hit bench brand instead (1.2 s at 7d). The days go as
          // an array: generate_series was estimated at 1,000 rows, which priced the probes high enough to
          // be compiled (JIT) on every call.
          : sql`
            select path, bot, status, sum(hits)::int as hits from (
              select p.path, x.bot, x.status, x.hits
              from unnest(${paths}::text[]) as p(path)
              cross join unnest(${dayList(from, (dayMs(to) - dayMs(from)) / DAY_MS + 1)}::date[]) as d(day)
              cross join lateral (
                select r.bot, r.status, r.hits from crawler_rollup r
                where r.account_id = ${accountId} and r.brand_id = ${brandId} and r.day = d.day::date and r.path = p.path
                offset 0
              ) x
              union all
              -- The queued hits of those paths in the range.
              select q.path, q.bot, q.status, 1 from crawler_fold_queue q
              where q.account_id = ${accountId} and q.brand_id = ${brandId} and q.path = any(${paths}::text[])
                and (q.ts at time zone 'UTC')::date between ${from}::date and ${to}::date
            ) r
            group by path, bot, status`.pipe(rows(PathStatusRow), Effect.orDie),

      botVerdicts: (accountId, brandId, from, to) =>
        sql`
          select bot, sum(hits)::int as hits, coalesce(sum(hits) filter (where verification = 'spoofed'), 0)::int as spoofed
          from (${liveDaily(accountId, brandId, [sql`day between ${from}::date and ${to}::date`], sql`bot, verification, hits`)}) d
          group by bot`.pipe(rows(BotVerdictRow), Effect.orDie),

      pageBotVerdicts: (accountId, brandId, from, to, path, filter) =>
        pageBotVerdictsQuery(accountId, brandId, from, to, path, filter).pipe(rows(PageBotVerdictRow), Effect.orDie),

      firstRollupDay: (accountId, brandId) =>
        firstRollupDayQuery(accountId, brandId).pipe(
          firstRow(DayRow),
          Effect.map(Option.match({ onNone: () => null, onSome: (row) => row.day })),
          Effect.orDie
        ),

      ensureSpans: (accountId, brandId, today) =>
        Effect.gen(function*() {
          const current = yield* sql`
            select to_char(as_of, 'YYYY-MM-DD') as "asOf" from crawler_span_state
            where account_id = ${accountId} and brand_id = ${brandId}`.pipe(
            firstRow(AsOfRow)
          )
          if (Option.exists(current, (row) => row.asOf === today)) return "current" as const
          return yield* sql.withTransaction(Effect.gen(function*() {
            // No fold meanwhile (the aggregator's lock, taken before the state row as a fold does): a
            // fold committing between the rebuild's read of the rollup and the new as_of would be in the
            // rollup and not in the spans, for a brand whose spans are built for the first time (a fold
            // only waits on a state row with an as_of).
            yield* sql`select pg_advisory_xact_lock(${FOLD_LOCK}::bigint)`
            yield* sql`
              insert into crawler_span_state (account_id, brand_id, as_of)
              select account_id, id, null from brands where account_id = ${accountId} and id = ${brandId}
              on conflict do nothing`
            // Held until commit: ingestion of this brand waits (its statement takes this row for share).
            const locked = yield* sql`
              select to_char(as_of, 'YYYY-MM-DD') as "asOf", (${today}::date - as_of)::int as gap
              from crawler_span_state where account_id = ${accountId} and brand_id = ${brandId} for update`.pipe(
                firstRow(LockedStateRow)
              )
            const { asOf, gap } = Option.getOrElse(locked, () => ({ asOf: null, gap: null }))
            if (asOf === today) return "current" as const
            // Short statements over a few hundred thousand rows at most: compiling them costs more than it saves.
            yield* sql`set local jit = off`
            let update: SpanUpdate = "rebuilt"
            if (asOf === null || gap === null || gap < 0) {
              yield* rebuildSpans(accountId, brandId, today, SPANS)
            } else {
              // Move each window from as_of to today: a window the gap covers is rebuilt, the others
              // lose the days that left them and gain the days after as_of (docs/agents.md).
              const rebuilt = SPANS.filter((span) => gap >= span)
              if (rebuilt.length > 0) yield* rebuildSpans(accountId, brandId, today, rebuilt)
              const rolled = SPANS.filter((span) => gap < span)
              if (rolled.length > 0) yield* rollSpans(accountId, brandId, asOf, today, rolled)
              update = rolled.length > 0 ? "rolled" : "rebuilt"
            }
            yield* rebuildPageSpans(accountId, brandId)
            if (update === "rolled" && !(yield* spansAgree(accountId, brandId, today))) {
              // Never expected: the spans disagree with crawler_daily (written by the same statements).
              yield* Effect.logWarning(`crawler spans of brand ${brandId} disagreed with crawler_daily; rebuilt from the rollup`)
              yield* rebuildSpans(accountId, brandId, today, SPANS)
              yield* rebuildPageSpans(accountId, brandId)
              update = "rebuilt"
            }
            yield* sql`
              update crawler_span_state set as_of = ${today}::date where account_id = ${accountId} and brand_id = ${brandId}`
            return update
          }))
          // Not interrupted when the reader that started it goes away (a client's timeout): the work
          // is committed for the next reader instead of rolled back.
        }).pipe(
          Effect.tap((update) =>
            update === "rebuilt"
              ? analyzeGrown(sql, SPAN_TABLES).pipe(
                // Statistics are an aid to the planner: a read never fails for want of them.
                Effect.catchAllCause((cause) => Effect.logWarning("span statistics not taken after a rebuild", cause))
              )
              : Effect.void
          ),
          Effect.uninterruptible,
          Effect.orDie
        ),

      staleSpans: (today) =>
        sql`
          select account_id::int as "accountId", brand_id::int as "brandId" from crawler_span_state
          where as_of is null or as_of < ${today}::date`.pipe(rows(BrandKeyRow), Effect.orDie),

      sweep: (rawBefore, rollupBefore) =>
        Effect.gen(function*() {
          // Per brand, so each delete is a range of the (account_id, brand_id, day, ...) keys.
          const brands = yield* sql`select account_id::int as "accountId", id::int as "brandId" from brands order by id`.pipe(
            rows(BrandKeyRow)
          )
          const total = { hits: 0, rollup: 0, daily: 0, referrals: 0 }
          for (const { accountId, brandId: id } of brands) {
            total.rollup += yield* sql`
              with d as (
                -- Never a day the brand's 90-day span still holds: moving the span subtracts those days
                -- (and checks the result against crawler_daily, kept alike).
                delete from crawler_rollup
                where account_id = ${accountId} and brand_id = ${id}
                  and day < least(${rollupBefore}::date, (select as_of - 89 from crawler_span_state
                                                          where account_id = ${accountId} and brand_id = ${id}))
                returning 1
              )
              select count(*)::int as n from d`.pipe(countOf)
            total.daily += yield* sql`
              with d as (
                delete from crawler_daily
                where account_id = ${accountId} and brand_id = ${id}
                  and day < least(${rollupBefore}::date, (select as_of - 89 from crawler_span_state
                                                          where account_id = ${accountId} and brand_id = ${id}))
                returning 1
              )
              select count(*)::int as n from d`.pipe(countOf)
          }
          return total
        }).pipe(Effect.orDie),

      upkeep: Effect.gen(function*() {
        yield* background.unsafe("vacuum crawler_fold_queue, crawler_page_span")
        yield* analyzeGrown(background, FOLDED_TABLES)
      }).pipe(Effect.orDie),

      queued: background`select exists (select 1 from crawler_fold_queue) as queued`.pipe(
        singleRow(QueuedRow),
        Effect.map((row) => row.queued),
        Effect.orDie
      ),

      fold: (limit) =>
        background.withTransaction(Effect.gen(function*() {
          // One folder at a time, whichever process: another one holding the lock is folding already.
          // The fold's commit does not wait for its WAL to reach the disk (synchronous_commit off for this
          // transaction alone): a crash may lose the last folds, but each whole, with the queue rows they
          // deleted, which the next fold takes again; every commit a client waits for (a delivery's) flushes
          // the WAL before it, folds included. So nothing is lost or counted twice, and the fold does not
          // wait for a flush of its own.
          const { locked } = yield* background`
            select pg_try_advisory_xact_lock(${FOLD_LOCK}::bigint) as locked,
                   set_config('synchronous_commit', 'off', true) as commit`.pipe(singleRow(FoldRow))
          if (!locked) return null
          // The statement the deliveries ran before the queue (docs/performance.md), over the hits of
          // many deliveries and brands at once: each rollup and span row is updated once per batch.
          const { folded } = yield* background`
            with batch as (
              delete from crawler_fold_queue
              where ctid = any(array(select ctid from crawler_fold_queue limit ${limit}))
              returning account_id, brand_id, ts, path, bot, vendor, kind, status, verification
            ), ins as (
              -- A brand deleted since its hits came: they go with the queue rows, counted nowhere.
              select b.* from batch b where exists (select 1 from brands r where r.account_id = b.account_id and r.id = b.brand_id)
            ), roll as (
              insert into crawler_rollup (brand_id, day, path, bot, status, verification, account_id, vendor, kind, hits, last_seen)
              select brand_id, (ts at time zone 'UTC')::date, path, bot, status, verification, account_id, min(vendor),
                     min(kind), count(*)::int, max(ts)
              from ins
              group by account_id, brand_id, 2, path, bot, status, verification
              on conflict on constraint crawler_rollup_verdict_key do update
                set hits = crawler_rollup.hits + excluded.hits, last_seen = greatest(crawler_rollup.last_seen, excluded.last_seen)
            ), daily as (
              -- The rollup without the path (KPIs, trend, breakdowns).
              insert into crawler_daily (brand_id, day, bot, status, verification, account_id, vendor, kind, hits)
              select brand_id, (ts at time zone 'UTC')::date, bot, status, verification, account_id, min(vendor), min(kind), count(*)::int
              from ins
              group by account_id, brand_id, 2, bot, status, verification
              on conflict on constraint crawler_daily_verdict_key do update set hits = crawler_daily.hits + excluded.hits
            ), span_state as (
              -- The 7/30/90-day totals of the brands that have them (moving them holds this row: ensureSpans).
              select s.account_id, s.brand_id, s.as_of from crawler_span_state s
              where (s.account_id, s.brand_id) in (select distinct account_id, brand_id from ins) and s.as_of is not null
              for share
            ), span_keys as (
              -- The folded hits per (brand, path, bot) in each window ending the spans' as_of, as the
              -- crawler_span columns of every window (0030). Read twice below, made once.
              select account_id, brand_id, path, bot, min(vendor) as vendor, min(kind) as kind, ${sql.literal(SPAN_FOLD_LIST)}
              from (
                select i.account_id, i.brand_id, i.path, i.bot, i.vendor, i.kind, i.status, i.ts,
                       s.as_of - (i.ts at time zone 'UTC')::date as age
                from ins i join span_state s on s.account_id = i.account_id and s.brand_id = i.brand_id
              ) h
              where age between 0 and ${sql.literal(String(OLDEST_AGE))}
              group by account_id, brand_id, path, bot
            ), spans as (
              -- One row per (path, bot), each window's figures in its columns (0030).
              insert into crawler_span (brand_id, path, bot, account_id, vendor, kind, ${sql.literal(spanWindowColumns(WINDOWS))})
              select brand_id, path, bot, account_id, vendor, kind, ${sql.literal(spanWindowColumns(WINDOWS))}
              from span_keys
              on conflict (account_id, brand_id, path, bot) do update set ${sql.literal(spanWindowUpdate(WINDOWS))}
            ), page_spans as (
              -- The per-path totals (0029: one row per path, a window's figures in its columns), with the
              -- distinct bots each window gains. A bot's span row before this fold is the one the statement
              -- sees: every sub-statement reads the snapshot it began with, and the fold's lock keeps the
              -- spans' other writers out (the rebuild and the roll take it; the verdict pass writes no spans). One index probe a
              -- (path, bot) (limit 1, as spanOfQueued: no join a generic plan could turn into a scan).
              insert into crawler_page_span (brand_id, path, account_id, ${sql.literal(PAGE_WINDOW_COLUMNS)}, entered)
              select k.brand_id, k.path, k.account_id, ${sql.literal(PAGE_FOLD_LIST)}, ${sql.literal(ENTERED_NEW)}
              from span_keys k
              left join lateral (
                select ${sql.literal(SPAN_BEFORE_COLUMNS)} from crawler_span p
                where p.account_id = k.account_id and p.brand_id = k.brand_id and p.path = k.path and p.bot = k.bot
                limit 1
              ) p on true
              group by k.account_id, k.brand_id, k.path
              on conflict (account_id, brand_id, path) do update set
                ${sql.literal(PAGE_WINDOW_UPDATE)}, entered = ${sql.literal(ENTERED_UPDATED)}
              returning account_id, brand_id, entered
            ), page_counts as (
              -- The windows' path counts (0028) grow by the paths that entered them.
              update crawler_span_state s set pages_7 = s.pages_7 + n.n7, pages_30 = s.pages_30 + n.n30,
                pages_90 = s.pages_90 + n.n90
              from (
                select account_id, brand_id, ${sql.literal(ENTERED_COUNTS)}
                from page_spans where entered > 0 group by account_id, brand_id
              ) n
              where s.account_id = n.account_id and s.brand_id = n.brand_id
            )
            select (select count(*) from batch)::int as folded`.pipe(singleRow(FoldedRow))
          return folded
        })).pipe(Effect.orDie)
    }
    return repo
  })
)
