/**
 * Hostile bodies: a gzip bomb (1 GiB of zeros in about 1 MiB) to the drain, and a 100 MB
 * body to the drain, the batch endpoint and the login endpoint (and chunked, no declared length, to
 * login). Each must be refused (drain: 200
 * with nothing stored, as docs/ingestion.md says; others 413 or a closed connection) without the
 * server's memory following the body: prints the server's peak RSS before and after.
 *
 *   bun run bench/bodies.ts        (PostgreSQL at 127.0.0.1:5432 or BENCH_DATABASE_URL)
 */
import { createGzip } from "node:zlib"
import { freshDatabase, loadAverage, peakRssMiB, seedAccount, startServer } from "./support.js"

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** gzip of `size` zero bytes, streamed (the bench never holds the inflated bytes). */
const gzipBomb = async (size: number) => {
  const gzip = createGzip({ level: 9 })
  const chunks: Array<Buffer> = []
  gzip.on("data", (c: Buffer) => chunks.push(c))
  const zeros = Buffer.alloc(1 << 20)
  for (let written = 0; written < size; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once("drain", resolve))
  }
  await new Promise((resolve) => gzip.end(resolve))
  return new Uint8Array(Buffer.concat(chunks))
}

const db = await freshDatabase(adminUrl, "aiv_bodies")
const server = await startServer({ DATABASE_URL: db.url, DATA_DIR: "memory://" }, 18434)
try {
  const { key, sites } = await seedAccount(server.base, db.url, 1)
  const auth = { authorization: `Bearer ${key}` }
  const drain = `${server.base}/api/public/v1/agents/ingest/drain?site_id=${sites[0]!.siteId}`
  const pid = server.proc.pid
  console.log(`bodies: server peak RSS after start ${(await peakRssMiB(pid)).toFixed(0)} MiB`)

  const send = async (name: string, url: string, body: Uint8Array, headers: Record<string, string> = {}) => {
    const started = performance.now()
    let outcome: string
    try {
      const response = await fetch(url, { method: "POST", headers: { ...auth, ...headers }, body: body as unknown as BodyInit })
      outcome = `${response.status} ${(await response.text()).slice(0, 120)}`
    } catch (error) {
      outcome = `connection closed (${(error as Error).message.slice(0, 50)})`
    }
    console.log(`  ${name} (${(body.length / 1048576).toFixed(1)} MiB sent): ${outcome}; ${((performance.now() - started) / 1000).toFixed(1)} s; server peak RSS ${(await peakRssMiB(pid)).toFixed(0)} MiB`)
  }

  const bomb = await gzipBomb(1 << 30)
  await send("gzip bomb, 1 GiB inflated, to the drain", drain, bomb)
  const big = new Uint8Array(100 * 1024 * 1024).fill(0x61)
  await send("100 MB body to the drain", drain, big)
  await send("100 MB body to the batch endpoint", `${server.base}/api/public/v1/agents/ingest`, big, { "content-type": "application/json" })
  await send("100 MB body to login", `${server.base}/api/v1/auth/login`, big, { "content-type": "application/json" })
  // The same 100 MB without a declared length (chunked): counted as it is read, refused past the cap.
  {
    const started = performance.now()
    const chunk = new Uint8Array(1024 * 1024).fill(0x61)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 100) return controller.close()
        sent++
        controller.enqueue(chunk)
      }
    })
    let outcome: string
    try {
      const init = { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" }
      const response = await fetch(`${server.base}/api/v1/auth/login`, init as RequestInit)
      outcome = `${response.status} ${(await response.text()).slice(0, 120)}`
    } catch (error) {
      outcome = `connection closed (${(error as Error).message.slice(0, 50)})`
    }
    console.log(`  100 MB chunked body to login (${sent} MiB sent): ${outcome}; ${((performance.now() - started) / 1000).toFixed(1)} s; server peak RSS ${(await peakRssMiB(pid)).toFixed(0)} MiB`)
  }
  const health = await fetch(`${server.base}/healthz`)
  console.log(`  afterwards /healthz ${health.status}; rows stored: ${await (async () => {
    const postgres = (await import("postgres")).default
    const sql = postgres(db.url, { max: 1 })
    const [row] = await sql<Array<{ n: number }>>`select count(*)::int as n from crawler_hits`
    const n = row?.n
    await sql.end()
    return n
  })()}; load average ${await loadAverage()}`)
} finally {
  await server.stop()
  await db.drop()
}
