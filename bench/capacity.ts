/**
 * Capacity plan (docs/scale.md): from costs measured on this machine (bench/ingest.ts, bench/growth.ts)
 * and a target load, how many API processes, what PostgreSQL / Citus topology, how much storage per month
 * with and without raw-hit retention, and which resource runs out first. Arithmetic only: it runs nothing.
 *
 *   bun run bench/capacity.ts                          # 10,000 accounts, 10 billion crawler hits a month
 *   ACCOUNTS=2000 HITS_PER_MONTH=1e9 bun run bench/capacity.ts
 *
 * Every input is an environment variable (defaults below, with where each measured figure comes from).
 */

const num = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}: not a non-negative number: ${raw}`)
  return value
}

const input = {
  // The load.
  accounts: num("ACCOUNTS", 10_000),
  hitsPerMonth: num("HITS_PER_MONTH", 10e9),
  /** Drain records delivered per stored crawler hit (browsers, assets: the drain sends every request). bench/ingest.ts mix: 5. */
  recordsPerHit: num("RECORDS_PER_HIT", 5),
  /** Peak hour over the mean. */
  peakToMean: num("PEAK_TO_MEAN", 3),
  /** Dashboard/API reads per account per day (/agents, /agents/pages and the like). */
  readsPerAccountDay: num("READS_PER_ACCOUNT_DAY", 500),

  // Measured here (docs/performance.md, quiet machine: 2,000-record drain deliveries, 4 in flight).
  /** API process CPU per drain record: 18.3 ms per 2,000-record delivery. */
  serverUsPerRecord: num("SERVER_US_PER_RECORD", 9.15),
  /** PostgreSQL CPU per drain record: 11.8 ms per 2,000-record delivery. */
  pgUsPerRecord: num("PG_US_PER_RECORD", 5.9),
  /** Per read: bench/growth.ts medians of /agents and /agents/pages on a quiet machine were 6.3 to 9.1 ms of wall time,
   *  server and PostgreSQL together; taken as 5 + 5 ms, an upper bound. */
  serverMsPerRead: num("SERVER_MS_PER_READ", 5),
  pgMsPerRead: num("PG_MS_PER_READ", 5),
  /** Bytes per stored hit, table and indexes (bench/growth.ts "bytes/hit": 272 to 282 from 1M to 20M hits). */
  bytesPerHit: num("BYTES_PER_HIT", 282),
  /** Rollup rows (crawler_rollup: day x path x bot x status x verdict) per account per day, and bytes each with indexes:
   *  287 per crawler_rollup row plus its share of crawler_daily (169 bytes a row, one for four rollup rows in
   *  bench/growth.ts's database of 4.8 million rollup rows). */
  rollupRowsPerAccountDay: num("ROLLUP_ROWS_PER_ACCOUNT_DAY", 3_000),
  bytesPerRollupRow: num("BYTES_PER_ROLLUP_ROW", 330),

  // Policy.
  rawRetentionDays: num("RAW_RETENTION_DAYS", 30),
  /** Partition period of crawler_hits in days (weekly): a hit is kept up to this long past the horizon. */
  partitionDays: num("PARTITION_DAYS", 7),
  rollupRetentionDays: num("ROLLUP_RETENTION_DAYS", 400),
  /** CPU use to plan for (headroom for failover and spikes). */
  targetUtilisation: num("TARGET_UTILISATION", 0.6),

  // Hardware.
  coresPerWorker: num("CORES_PER_WORKER", 16),
  /** Usable disk per Citus worker (data, indexes; WAL and backups apart). */
  diskTbPerWorker: num("DISK_TB_PER_WORKER", 4),
  /** Random index-page reads a worker's disks serve per second (cloud NVMe: tens of thousands). */
  iopsPerWorker: num("IOPS_PER_WORKER", 40_000),
  /** Memory per worker, for the hot index pages. */
  ramGbPerWorker: num("RAM_GB_PER_WORKER", 128),
  /** Bytes of the crawler_hits primary key per hit (a share of bytesPerHit; an estimate from the key's columns, not measured). */
  pkBytesPerHit: num("PK_BYTES_PER_HIT", 70)
}

const SECONDS_PER_MONTH = 30.44 * 86_400
const TB = 1e12
const GB = 1e9

const hitsPerSecond = input.hitsPerMonth / SECONDS_PER_MONTH
const peakRecordsPerSecond = hitsPerSecond * input.recordsPerHit * input.peakToMean
const peakHitsPerSecond = hitsPerSecond * input.peakToMean
const readsPerSecondPeak = (input.accounts * input.readsPerAccountDay / 86_400) * input.peakToMean

// API processes: one Bun process uses one core for JavaScript.
const apiCores = (peakRecordsPerSecond * input.serverUsPerRecord / 1e6 + readsPerSecondPeak * input.serverMsPerRead / 1e3) /
  input.targetUtilisation
const apiProcesses = Math.max(2, Math.ceil(apiCores) + 1) // N+1: one can go without losing the peak

// Database CPU.
const pgCores = (peakRecordsPerSecond * input.pgUsPerRecord / 1e6 + readsPerSecondPeak * input.pgMsPerRead / 1e3) / input.targetUtilisation

// Storage.
const hitsPerDay = input.hitsPerMonth / 30.44
const rawKeptDays = input.rawRetentionDays + input.partitionDays
const rawKeptBytes = hitsPerDay * rawKeptDays * input.bytesPerHit
const rawPerMonthBytes = input.hitsPerMonth * input.bytesPerHit
const rollupPerMonthBytes = input.accounts * input.rollupRowsPerAccountDay * 30.44 * input.bytesPerRollupRow
const rollupKeptBytes = input.accounts * input.rollupRowsPerAccountDay * input.rollupRetentionDays * input.bytesPerRollupRow
const steadyWithRetention = rawKeptBytes + rollupKeptBytes

// The key probe of an insert reads each live partition's primary key (docs/scale.md): the weeks kept plus
// the ones made ahead. The current week's index pages are hot; the older ones are read from disk when
// they do not fit in memory.
const livePartitions = Math.ceil(rawKeptDays / input.partitionDays) + 1
const weekPkBytes = hitsPerDay * input.partitionDays * input.pkBytesPerHit
const allPkBytes = weekPkBytes * livePartitions
const probeReadsPerSecond = peakHitsPerSecond * (livePartitions - 1)

// Citus workers: enough for the disk, the CPU, the index probes that miss memory, with room to grow.
const workersForDisk = Math.ceil(steadyWithRetention / (input.diskTbPerWorker * TB * 0.7))
const workersForCpu = Math.ceil(pgCores / input.coresPerWorker)
const pkFitsIn = (workers: number) => allPkBytes / workers < input.ramGbPerWorker * GB * 0.5
const workersForIops = Math.ceil(probeReadsPerSecond / input.iopsPerWorker)
const workersForMemory = (() => {
  let w = 1
  while (!pkFitsIn(w) && w < 1_000) w++
  return w
})()
// The probe is served either from memory (the keys fit) or by the disks (random reads): whichever needs fewer workers.
const workersForProbe = Math.min(workersForMemory, workersForIops)
const workers = Math.max(2, workersForDisk, workersForCpu, workersForProbe)
// Shards: fixed when a table is distributed; several per worker so workers can be added by moving shards.
const shardCount = Math.max(32, 2 ** Math.ceil(Math.log2(workers * 8)))

const bottlenecks = [
  { what: "disk (raw hits kept + rollups)", workers: workersForDisk },
  { what: "PostgreSQL CPU (ingest statements and reads)", workers: workersForCpu },
  {
    what: `the cross-partition key probe (keys in memory: ${workersForMemory} workers; from disk: ${workersForIops})`,
    workers: workersForProbe
  }
].sort((a, b) => b.workers - a.workers)

const f = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const tb = (bytes: number) => `${f(bytes / TB, 2)} TB`

console.log(`Capacity plan: ${f(input.accounts)} accounts, ${f(input.hitsPerMonth / 1e9, 1)} billion crawler hits a month`)
console.log(`
Load
  crawler hits:           ${f(hitsPerSecond)} /s mean, ${f(peakHitsPerSecond)} /s peak (x${input.peakToMean})
  drain records:          ${f(peakRecordsPerSecond)} /s peak (${input.recordsPerHit} records per stored hit)
  reads:                  ${f(readsPerSecondPeak, 1)} /s peak (${input.readsPerAccountDay} per account per day)

API processes (Bun, one core each)
  CPU at peak:            ${f(apiCores, 2)} cores at ${input.targetUtilisation * 100}% use (${input.serverUsPerRecord} us/record, ${input.serverMsPerRead} ms/read)
  processes:              ${apiProcesses} (N+1), behind one load balancer; they share nothing but the database and the spool directory

PostgreSQL
  CPU at peak:            ${f(pgCores, 2)} cores (${input.pgUsPerRecord} us/record, ${input.pgMsPerRead} ms/read)
  live hit partitions:    ${livePartitions} (${rawKeptDays} days kept at most, weekly partitions, plus the week ahead)
  hit primary keys:       ${tb(weekPkBytes)} per week, ${tb(allPkBytes)} over the live partitions
  key probes:             ${f(probeReadsPerSecond)} index lookups /s at peak in the older partitions

Storage
  raw hits per month:     ${tb(rawPerMonthBytes)} (${input.bytesPerHit} bytes per hit with its indexes)
  rollups per month:      ${tb(rollupPerMonthBytes)} (${f(input.rollupRowsPerAccountDay)} rows per account per day)
  with retention:         ${tb(steadyWithRetention)} steady (raw ${tb(rawKeptBytes)} for ${rawKeptDays} days + rollups ${tb(rollupKeptBytes)} for ${input.rollupRetentionDays} days)
  without raw retention:  grows ${tb(rawPerMonthBytes + rollupPerMonthBytes)} a month: ${tb(12 * rawPerMonthBytes + rollupKeptBytes)} after a year

Citus
  coordinator:            1 (+1 standby): routes by account_id, holds the reference tables; no hit rows
  workers:                ${workers} (+1 standby each) of ${input.coresPerWorker} cores, ${input.ramGbPerWorker} GB, ${input.diskTbPerWorker} TB
  shard count:            ${shardCount} (citus.shard_count before create_distributed_table; ${f(shardCount / workers, 1)} per worker, room to add workers)
  workers needed for:     ${bottlenecks.map((b) => `${b.what}: ${b.workers}`).join("; ")}

First bottleneck: ${bottlenecks[0]!.what} (${bottlenecks[0]!.workers} workers)`)
