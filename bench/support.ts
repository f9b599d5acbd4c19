/**
 * Shared by the operations benches (bench/load.ts, fault.ts, fuzz.ts, bodies.ts): a server process
 * on a fresh database, an account on the growth plan with brands and a key, drain bodies, and
 * the server's peak RSS. Loopback only; every run is bounded in time and count.
 */
import { spawn, type Subprocess } from "bun"
import { Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import postgres from "postgres"
import { mulberry32 } from "../src/platform/Random.js"

export const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
export const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"

const StartScript = Schema.Struct({ scripts: Schema.Struct({ start: Schema.String }) })

/**
 * The environment package.json's start script gives the server: its `NAME=${NAME:-value}` prefixes
 * (the allocator's MIMALLOC_PURGE_DELAY, docs/operations.md), so a bench's servers, ours and the bare
 * baselines alike, run as `bun run start` runs ours. SERVER_START_ENV=0 leaves them out (the
 * runtime's defaults), for a before and after. `root`: the checkout whose package.json is read.
 */
export const startScriptEnv = (root = "."): Record<string, string> => {
  if (process.env.SERVER_START_ENV === "0") return {}
  const { scripts } = Schema.decodeUnknownSync(StartScript)(JSON.parse(readFileSync(join(root, "package.json"), "utf8")))
  const env: Record<string, string> = {}
  // As in the script, a value the environment already holds wins over the script's default.
  for (const [, name, value] of scripts.start.matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=\$\{\1:-([^}]*)\}/g)) env[name!] = process.env[name!] ?? value!
  return env
}

/** A fresh database on the server of `adminUrl`; returns its URL and a drop function. */
export const freshDatabase = async (adminUrl: string, prefix: string) => {
  const name = `${prefix}_${Date.now().toString(36)}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined)
      await admin.end()
    }
  }
}

export interface Server {
  readonly base: string
  readonly proc: Subprocess
  readonly stop: () => Promise<number>
}

/**
 * `bun run src/app/main.ts` of the checkout `cwd` (default: this one) with these settings (rate
 * limits far above the load unless given), pinned to `core` when given and taskset is present.
 */
export const startServer = async (env: Record<string, string>, port: number, core?: number, cwd?: string): Promise<Server> => {
  const argv = ["bun", "run", "src/app/main.ts"]
  const proc = spawn(core === undefined || Bun.which("taskset") === null ? argv : ["taskset", "-c", String(core), ...argv], {
    ...(cwd === undefined ? {} : { cwd }),
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      RATE_LIMIT_API_KEY: "1000000000/1",
      RATE_LIMIT_API_IP: "1000000000/1",
      RATE_LIMIT_AUTH_IP: "1000/1",
      // A benchmark's load comes from one key at many requests in flight: no bound on reads in flight.
      CONCURRENT_READS_PER_KEY: "0",
      CONCURRENT_READS_PER_SESSION: "0",
      LOG_REQUESTS: "false",
      ...startScriptEnv(cwd),
      // e.g. SERVER_BUN_OPTIONS="--cpu-prof-md --cpu-prof-dir=/tmp/prof" profiles the server alone.
      ...(process.env.SERVER_BUN_OPTIONS ? { BUN_OPTIONS: process.env.SERVER_BUN_OPTIONS } : {}),
      ...env
    },
    // SERVER_STDOUT=1 shows the server's log lines (a 503's cause, say) among the bench's output.
    stdout: process.env.SERVER_STDOUT ? "inherit" : "ignore",
    stderr: "inherit"
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}`)
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, proc, stop: async () => (proc.kill("SIGTERM"), await proc.exited) }
    } catch {
      // not up yet
    }
    await Bun.sleep(100)
  }
  throw new Error("server did not come up")
}

const json = { "content-type": "application/json" }

/**
 * An account on the enterprise plan with brands (a count, named brand-0.., or the given slugs)
 * and a key, through the API (the plan is set in SQL).
 */
export const seedAccount = async (base: string, databaseUrl: string, brands: number | ReadonlyArray<string>) => {
  const email = `bench-${Date.now().toString(36)}@example.com`
  const signup = await fetch(`${base}/api/v1/auth/signup`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email, password: "bench-password", account_name: "Bench" })
  })
  if (signup.status !== 201) throw new Error(`signup ${signup.status}`)
  const cookie = signup.headers.get("set-cookie")!.split(";")[0]!
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  await db`update accounts set plan_id = 'enterprise' where id = (select account_id from users where email = ${email})`
  await db.end()
  const sites: Array<{ slug: string; siteId: string }> = []
  const slugs = typeof brands === "number" ? Array.from({ length: brands }, (_, i) => `brand-${i}`) : brands
  for (const slug of slugs) {
    const r = await fetch(`${base}/api/v1/me/brands`, {
      method: "POST",
      headers: { ...json, cookie, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ brand_slug: slug, brand_name: slug, domain: `${slug}.example`, vertical: "saas" })
    })
    if (r.status !== 201) throw new Error(`brand ${r.status}: ${await r.text()}`)
    sites.push({ slug, siteId: ((await r.json()) as { site_id: string }).site_id })
  }
  const k = await fetch(`${base}/api/v1/me/api-keys`, { method: "POST", headers: { ...json, cookie, "sec-fetch-site": "same-origin" }, body: JSON.stringify({ name: "bench" }) })
  const { key } = (await k.json()) as { key: string }
  return { key, sites, cookie }
}

/** One line of an NDJSON drain delivery: a GET of acme.example from the Lambda source. */
const drainLine = (id: string, at: number, path: string, userAgent: string, statusCode: number, clientIp: string) =>
  JSON.stringify({
    id,
    source: "lambda",
    timestamp: at,
    proxy: { timestamp: at, method: "GET", host: "acme.example", path, userAgent: [userAgent], statusCode, clientIp }
  })

/**
 * NDJSON drain delivery: `hits` GPTBot requests with unique ids, plus `humans` browser ones.
 * Paths are `/<tag>/<i>` (every one new: easy to check one by one) unless `pathOf` picks them.
 */
export const drainBody = (tag: string, hits: number, humans = 0, at = Date.now(), pathOf?: (i: number) => string) => {
  const lines: Array<string> = []
  for (let i = 0; i < hits + humans; i++) {
    lines.push(drainLine(`${tag}-${i}`, at, pathOf === undefined ? `/${tag}/${i}` : pathOf(i), i < hits ? GPTBOT : CHROME, 200, "198.51.100.7"))
  }
  return lines.join("\n")
}

/** Peak resident set of a process so far (VmHWM), in MiB. */
export const peakRssMiB = async (pid: number) => {
  const status = await Bun.file(`/proc/${pid}/status`).text()
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024
}

export const percentile = (sorted: ArrayLike<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

export const loadAverage = async () => (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")

/**
 * The whole application in process (no port) on the PostgreSQL database at `databaseUrl`, for the
 * benches that drive it request by request (bench/import.ts, bench/visibility.ts).
 */
export const inProcessApp = async (databaseUrl: string) => {
  const { HttpApiBuilder, HttpServer } = await import("@effect/platform")
  const { Layer, Option, Redacted } = await import("effect")
  const { PasswordHasherCheap } = await import("../src/accounts/Passwords.js")
  const { ApiLive, makeServices, RepositoriesLive } = await import("../src/app/Layers.js")
  const { appConfigTest } = await import("../src/platform/Config.js")
  const { MigratedSqlLive } = await import("../src/platform/Migrations.js")
  const config = appConfigTest({ databaseUrl: Option.some(Redacted.make(databaseUrl)) })
  const infra = RepositoriesLive.pipe(Layer.provideMerge(MigratedSqlLive), Layer.provide(config))
  const app = Layer.mergeAll(ApiLive, HttpServer.layerContext).pipe(
    Layer.provide(makeServices({ repositories: infra, passwords: PasswordHasherCheap })),
    Layer.provide(infra),
    Layer.provide(config)
  )
  const { dispose, handler } = HttpApiBuilder.toWebHandler(app)
  const call = (path: string, init: RequestInit = {}) => handler(new Request(`http://localhost${path}`, init))
  const postJson = async (path: string, body: unknown, cookie = "") => {
    const response = await call(path, { method: "POST", headers: { "content-type": "application/json", cookie, "sec-fetch-site": "same-origin" }, body: JSON.stringify(body) })
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return response
  }
  return { call, postJson, dispose }
}

/** Clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK; 100 on Linux unless built otherwise). */
const clockTicks = (() => {
  const out = Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()
  return Number(out) > 0 ? Number(out) : 100
})()

/** utime + stime of one process so far, in milliseconds (0 when it is gone). */
export const processCpuMs = (pid: number) => statCpuMs(`/proc/${pid}/stat`)

/** utime + stime of a /proc stat file (a process's, or a thread's under /proc/<pid>/task), in milliseconds (0 when gone). */
export const statCpuMs = async (path: string) => {
  try {
    const stat = await Bun.file(path).text()
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return 0
  }
}

/** A process and its descendants (`taskset` execs; `bun run` may fork), from /proc/<pid>/task/<pid>/children. */
export const processTree = async (pid: number): Promise<Array<number>> => {
  const out = [pid]
  try {
    const children = (await Bun.file(`/proc/${pid}/task/${pid}/children`).text()).trim()
    for (const child of children === "" ? [] : children.split(" ")) out.push(...(await processTree(Number(child))))
  } catch {
    // gone
  }
  return out
}

/**
 * Time the threads of a process tree spent runnable but waiting for a CPU so far, in milliseconds
 * (/proc/<pid>/task/<tid>/schedstat, second field): on a shared machine, how much the load of others
 * held the measured process back.
 */
export const treeRunDelayMs = async (pid: number) => {
  let total = 0
  for (const p of await processTree(pid)) {
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const stat = await Bun.file(`/proc/${p}/task/${tid}/schedstat`).text().catch(() => "0 0 0")
        total += Number(stat.split(" ")[1]) / 1e6
      }
    } catch {
      // gone
    }
  }
  return total
}

/** CPU of a process tree so far, in milliseconds. */
export const treeCpuMs = async (pid: number) => {
  let total = 0
  for (const p of await processTree(pid)) total += await processCpuMs(p)
  return total
}

/**
 * CPU of the PostgreSQL client backends connected to database `name` (read from /proc of each
 * backend process, so the PostgreSQL server must run on this machine), by backend pid. A delta of
 * two snapshots counts only backends present in both plus new ones from zero: pools keep their
 * connections, so that is all of the work.
 */
export const backendCpu = async (sql: postgres.Sql, name: string) => {
  const rows = await sql<Array<{ pid: number }>>`
    select pid from pg_stat_activity where datname = ${name} and backend_type = 'client backend' and pid <> pg_backend_pid()`
  const out = new Map<number, number>()
  for (const { pid } of rows) out.set(pid, await processCpuMs(pid))
  return out
}
export const backendCpuDeltaMs = (before: Map<number, number>, after: Map<number, number>) => {
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}
/** Pin the client backends of database `name` to `core` (no-op without taskset or permission). */
export const pinBackends = async (sql: postgres.Sql, name: string, core: number) => {
  if (Bun.which("taskset") === null) return
  const rows = await sql<Array<{ pid: number }>>`select pid from pg_stat_activity where datname = ${name} and backend_type = 'client backend'`
  for (const { pid } of rows) Bun.spawnSync(["taskset", "-cp", String(core), String(pid)])
}

// ---------------------------------------------------------------------------
// The crawler-heavy mix (docs/performance.md): deterministic draws, pages Zipf-distributed, client
// addresses either spread over the whole IPv4 space or inside the operators' published prefixes.
// ---------------------------------------------------------------------------

/** A seeded generator of uniform numbers in [0, 1) (mulberry32, as the demo's): the same seed, the same deliveries. */
export const seeded = mulberry32

/** Ranks 0..n-1 drawn with probability proportional to 1 / (rank + 1) (Zipf, s = 1). */
export const zipf = (n: number, rand: () => number) => {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1)
  return () => {
    const u = rand() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** Any public-looking IPv4 address (first octet 1 to 223): no two deliveries share a verification look-up. */
export const anyIpv4 = (rand: () => number) => {
  const n = Math.floor(rand() * 4294967296) >>> 0
  return `${1 + ((n >>> 24) % 223)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`
}

/** The five AI crawlers of the heavy 20-record delivery, each with its operator's range file. */
export const HEAVY_CRAWLERS = [
  { bot: "GPTBot", file: "openai-gptbot.json", ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)" },
  { bot: "ClaudeBot", file: "anthropic-bots.json", ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)" },
  { bot: "PerplexityBot", file: "perplexity.json", ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)" },
  { bot: "OAI-SearchBot", file: "openai-searchbot.json", ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot" },
  { bot: "ChatGPT-User", file: "openai-chatgpt-user.json", ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot" }
] as const

/** IPv4 prefixes of a range file the server loads (src/verification/ranges), as [first address, size]. */
const prefixesOf = async (file: string) => {
  const json = (await Bun.file(new URL(`../src/verification/ranges/${file}`, import.meta.url)).json()) as { prefixes: Array<{ ipv4Prefix?: string }> }
  const out: Array<[number, number]> = []
  for (const p of json.prefixes) {
    if (p.ipv4Prefix === undefined) continue
    const [addr, bits] = p.ipv4Prefix.split("/") as [string, string]
    const n = addr.split(".").reduce((acc, o) => acc * 256 + Number(o), 0)
    out.push([n, 2 ** (32 - Number(bits))])
  }
  if (out.length === 0) throw new Error(`${file}: no IPv4 prefix`)
  return out
}
const dotted = (n: number) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`

/**
 * Builder of the heavy 20-record delivery: `crawlers` (18) hits of the five crawlers above from
 * addresses inside their published prefixes (they verify by range), the rest browsers from anywhere;
 * pages Zipf over `pages` (2,000); every record id unique (tag + index). Vercel drain NDJSON.
 */
export const heavyDeliveries = async (seed = 1, pages = 2_000) => {
  const rand = seeded(seed)
  const page = zipf(pages, rand)
  const ranges = await Promise.all(HEAVY_CRAWLERS.map((c) => prefixesOf(c.file)))
  const inRange = (i: number) => {
    const list = ranges[i]!
    const [first, size] = list[Math.floor(rand() * list.length)]!
    return dotted(first + Math.floor(rand() * size))
  }
  return (tag: string, records = 20, crawlers = 18, at = Date.now()) => {
    const lines: Array<string> = []
    for (let i = 0; i < records; i++) {
      const c = i < crawlers ? Math.floor(rand() * HEAVY_CRAWLERS.length) : -1
      // Drawn in this order (page, status, address): the same seed, the same deliveries.
      const path = `/docs/page-${page()}`
      const statusCode = rand() < 0.05 ? 404 : 200
      lines.push(drainLine(`${tag}-${i}`, at, path, c >= 0 ? HEAVY_CRAWLERS[c]!.ua : CHROME, statusCode, c >= 0 ? inRange(c) : anyIpv4(rand)))
    }
    return lines.join("\n")
  }
}

/**
 * `seed` crawler hits over the last 30 days, 2,000 records a delivery: `send(d, count, at)` posts
 * delivery d of `count` records dated `at` (ms); each must be answered 200 or 202.
 */
export const seedDeliveries = async (seed: number, send: (d: number, count: number, at: number) => Promise<Response>) => {
  for (let d = 0; d * 2_000 < seed; d++) {
    const at = Date.now() - Math.floor(((d * 7919) % 30) * 86_400_000 + (d % 24) * 3_600_000)
    const r = await send(d, Math.min(2_000, seed - d * 2_000), at)
    if (r.status !== 200 && r.status !== 202) throw new Error(`seed delivery: ${r.status} ${await r.text()}`)
  }
}

/**
 * The seed of the benches that measure one request at a time (bench/in-process.ts,
 * bench/request-rate.ts): an account of 3 brands on the server at `base` (seedAccount), `seed`
 * heavy-mix crawler hits over the last 30 days spread over them (seedDeliveries), and a wait until the
 * aggregator has folded them. Returns the key's header, the brands and the heavy-mix bodies (seed 7).
 */
export const seedHeavyBrands = async (base: string, databaseUrl: string, seed: number) => {
  const heavy = await heavyDeliveries(7)
  const { key, sites } = await seedAccount(base, databaseUrl, 3)
  const auth = { authorization: `Bearer ${key}` }
  await seedDeliveries(seed, (d, count, at) =>
    fetch(`${base}/api/public/v1/agents/ingest/drain?site_id=${sites[d % sites.length]!.siteId}`, {
      method: "POST",
      headers: auth,
      body: heavy(`s${d}`, count, count, at)
    }))
  const local = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  await queueFolded(local)
  await local.end()
  return { auth, sites, heavy }
}

/**
 * Returns once the aggregator has folded every queued hit of the database of `sql` (at most 120 s),
 * looking every `everyMs` (a timed round's end wants a short one).
 */
export const queueFolded = async (sql: postgres.Sql, everyMs = 100) => {
  const deadline = performance.now() + 120_000
  while (performance.now() < deadline) {
    if (!(await sql<Array<{ queued: boolean }>>`select exists (select 1 from crawler_fold_queue) as queued`)[0]!.queued) return
    await Bun.sleep(everyMs)
  }
  throw new Error("the fold queue did not empty in 120 s")
}

/** `--name=value` of the command line, else the environment variable, else the default. */
export const option = (name: string, env: string, fallback: string) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`))
  return arg !== undefined ? arg.slice(name.length + 3) : process.env[env] ?? fallback
}

/** `--mix=heavy|light|both` (or MIX): which mixes a bench runs, heavy first. */
export const mixes = (): Array<"heavy" | "light"> => {
  const m = option("mix", "MIX", "heavy")
  if (m === "both") return ["heavy", "light"]
  if (m === "heavy" || m === "light") return [m]
  throw new Error(`--mix is heavy, light or both, not ${m}`)
}

export interface OpenLoopResult {
  /** Requests due in the window. */
  readonly due: number
  /** Sent on schedule (the rest were not sent: the in-flight cap was reached, counted as unsent). */
  readonly sent: number
  readonly unsent: number
  readonly answered: number
  readonly ok: number
  readonly errors: Map<string, number>
  /** Latency of each answered request from its scheduled time (no coordinated omission), ms. */
  readonly latencies: Float64Array
  /** Kind of each answered request, parallel to latencies. */
  readonly kinds: Uint8Array
  /** Seconds from the first due time to the last answer (or the window, if longer). */
  readonly elapsed: number
  /** Resolves when every request sent has settled, those counted as "no answer" included. */
  readonly settled: Promise<unknown>
}

/**
 * A true open loop: request i is due at start + i / rate whatever happened to the earlier ones; the
 * generator wakes every millisecond and sends everything due. With `maxInFlight` requests open a due
 * request is not sent (counted as unsent), as a client with that many connections would. Requests
 * still open `graceMs` after the window are counted as errors ("no answer").
 */
export const openLoop = async (
  rate: number,
  seconds: number,
  request: (i: number) => { kind: number; response: Promise<Response>; check?: (r: Response) => Promise<string | null> },
  maxInFlight = 2_000,
  graceMs = 30_000
): Promise<OpenLoopResult> => {
  const due = Math.round(rate * seconds)
  const latencies = new Float64Array(due)
  const kinds = new Uint8Array(due)
  const errors = new Map<string, number>()
  const fail = (why: string) => errors.set(why, (errors.get(why) ?? 0) + 1)
  let sent = 0
  let unsent = 0
  let answered = 0
  let ok = 0
  let inFlight = 0
  let lastAnswer = 0
  const start = performance.now()
  const one = async (i: number, scheduled: number) => {
    inFlight++
    sent++
    let outcome: string | null = null
    let kind = 0
    try {
      const r = request(i)
      kind = r.kind
      const response = await r.response
      outcome = r.check !== undefined ? await r.check(response) : (await response.arrayBuffer(), response.status === 200 || response.status === 202 ? null : `status ${response.status}`)
    } catch (error) {
      outcome = `network: ${String((error as Error).message).slice(0, 60)}`
    }
    inFlight--
    const at = performance.now()
    latencies[answered] = at - scheduled
    kinds[answered] = kind
    answered++
    lastAnswer = at
    if (outcome === null) ok++
    else fail(outcome)
  }
  const pending = new Set<Promise<void>>()
  let next = 0
  while (next < due) {
    const now = performance.now()
    while (next < due && start + (next * 1000) / rate <= now) {
      if (inFlight >= maxInFlight) unsent++
      else {
        const p = one(next, start + (next * 1000) / rate)
        pending.add(p)
        void p.then(() => pending.delete(p))
      }
      next++
    }
    await Bun.sleep(1)
  }
  const windowEnd = start + seconds * 1000
  const open = await Promise.race([Promise.all(pending).then(() => 0), Bun.sleep(Math.max(0, windowEnd + graceMs - performance.now())).then(() => pending.size)])
  if (open > 0) errors.set(`no answer within ${graceMs / 1000} s of the end`, open)
  return {
    due,
    sent,
    unsent,
    answered,
    ok,
    errors,
    latencies: latencies.slice(0, answered),
    kinds: kinds.slice(0, answered),
    elapsed: (Math.max(lastAnswer, windowEnd) - start) / 1000,
    settled: Promise.all(pending)
  }
}

export const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
