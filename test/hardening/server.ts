import { readFileSync } from "node:fs"
import { join } from "node:path"

/** Real server processes for the hardening tests: `bun run src/app/main.ts` on a port, with its output kept. */
export interface RunningServer {
  readonly base: string
  readonly process: ReturnType<typeof Bun.spawn>
  /** Everything the process wrote to stdout so far. */
  readonly stdout: () => string
  /** Everything the process wrote to stderr so far. */
  readonly stderr: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<number>
}

export const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"

export interface StartOptions {
  /** The script to run, relative to the project root (default `src/app/main.ts`). */
  readonly entry?: string
  /** Start from this environment instead of the test process's own (HOST, PORT and `env` still win). */
  readonly baseEnv?: Record<string, string | undefined>
}

const ROOT = join(import.meta.dir, "..", "..")

/** Bun's own flags in `bun run start` (package.json), so a test server runs as deployed. */
export const startFlags = (): ReadonlyArray<string> => {
  const manifest: unknown = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
  const start = typeof manifest === "object" && manifest !== null && "scripts" in manifest &&
      typeof manifest.scripts === "object" && manifest.scripts !== null && "start" in manifest.scripts
    ? String(manifest.scripts.start)
    : ""
  const words = start.split(/\s+/)
  return words.slice(1, words.indexOf("run")).filter((word) => word.startsWith("--"))
}

/**
 * A port nobody listens on now, from the system (a random pick in a fixed range could be an
 * outgoing connection's ephemeral port, and did collide under the two-process suite).
 */
export const freePort = (): number => {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) })
  const port = probe.port
  probe.stop(true)
  if (port === undefined) throw new Error("no free port")
  return port
}

export const startServer = async (
  env: Record<string, string>,
  timeoutMs = 45_000,
  options: StartOptions = {}
): Promise<RunningServer> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env, timeoutMs, options)
    } catch (error) {
      // Taken between the probe and the bind: another port.
      if (attempt >= 3 || !String(error).includes("in use")) throw error
    }
  }
}

const startServerOnce = async (
  env: Record<string, string>,
  timeoutMs: number,
  options: StartOptions
): Promise<RunningServer> => {
  const port = freePort()
  const child = Bun.spawn(["bun", ...startFlags(), "run", options.entry ?? "src/app/main.ts"], {
    cwd: ROOT,
    env: { ...(options.baseEnv ?? process.env), HOST: "127.0.0.1", PORT: String(port), ...env },
    stdout: "pipe",
    stderr: "pipe"
  })
  let out = ""
  let err = ""
  const collect = async (stream: ReadableStream<Uint8Array>, into: (text: string) => void) => {
    const reader = stream.getReader()
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      into(decoder.decode(value, { stream: true }))
    }
  }
  void collect(child.stdout as ReadableStream<Uint8Array>, (text) => (out += text))
  void collect(child.stderr as ReadableStream<Uint8Array>, (text) => (err += text))
  const base = `http://127.0.0.1:${port}`
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}\n${err}`)
    try {
      if ((await fetch(`${base}/healthz`)).ok) break
    } catch {
      // not up yet
    }
    await Bun.sleep(100)
  }
  if (Date.now() >= until) {
    child.kill("SIGKILL")
    throw new Error(`server did not come up:\n${out}\n${err}`)
  }
  return {
    base,
    process: child,
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal)
      return await child.exited
    }
  }
}

const json = { "content-type": "application/json" }

/** Signs up through the API; returns the session cookie. */
export const signupOver = async (base: string, email: string) => {
  const response = await fetch(`${base}/api/v1/auth/signup`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email, password: "a long password", account_name: email })
  })
  if (response.status !== 201) throw new Error(`signup ${response.status}: ${await response.text()}`)
  return response.headers.get("set-cookie")!.split(";")[0]!
}

export const brandOver = async (base: string, cookie: string, slug: string) => {
  const response = await fetch(`${base}/api/v1/me/brands`, {
    method: "POST",
    // A cookie-authenticated change names its origin, as a browser does (docs/security.md).
    headers: { ...json, cookie, origin: base },
    body: JSON.stringify({ brand_slug: slug, brand_name: slug, domain: `${slug}.example`, vertical: "saas" })
  })
  if (response.status !== 201) throw new Error(`brand ${response.status}: ${await response.text()}`)
  return (await response.json()) as { site_id: string }
}

export const keyOver = async (base: string, cookie: string, name = "k") => {
  const response = await fetch(`${base}/api/v1/me/api-keys`, {
    method: "POST",
    // A cookie-authenticated change names its origin, as a browser does (docs/security.md).
    headers: { ...json, cookie, origin: base },
    body: JSON.stringify({ name })
  })
  if (response.status !== 201) throw new Error(`key ${response.status}: ${await response.text()}`)
  return (await response.json()) as { id: string; key: string }
}

/** NDJSON drain delivery of crawler hits with unique record ids and paths `/<tag>/<i>`. */
export const drainBody = (tag: string, count: number, at = Date.now()) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      id: `${tag}-${i}`,
      source: "lambda",
      timestamp: at,
      proxy: { timestamp: at, method: "GET", host: "acme.example", path: `/${tag}/${i}`, userAgent: [GPTBOT], statusCode: 200, clientIp: "198.51.100.7" }
    })).join("\n")
