import { join } from "node:path"

/**
 * The web application's static assets, bundled in memory by Bun.build the first time they are
 * asked for (a fraction of a second), so `bun run start` on a fresh clone serves them with no
 * separate build step and nothing built is committed. Chart.js comes from node_modules: no CDN.
 */

export interface Asset {
  readonly body: string
  readonly contentType: string
}

const APP_DIR = join(import.meta.dir, "app")

let bundle: Promise<ReadonlyMap<string, Asset>> | undefined

const build = async (): Promise<ReadonlyMap<string, Asset>> => {
  const result = await Bun.build({
    entrypoints: [join(APP_DIR, "main.ts")],
    target: "browser",
    format: "esm",
    minify: true,
    sourcemap: "none",
    define: { "process.env.NODE_ENV": JSON.stringify("production") }
  })
  if (!result.success) throw new AggregateError(result.logs, "web application build failed")
  const js = await result.outputs.find((output) => output.kind === "entry-point")!.text()
  const css = await Bun.file(join(APP_DIR, "style.css")).text()
  return new Map([
    ["app.js", { body: js, contentType: "text/javascript; charset=utf-8" }],
    ["app.css", { body: css, contentType: "text/css; charset=utf-8" }]
  ])
}

/** The built assets, keyed by file name; built once per process. */
export const webAssets = (): Promise<ReadonlyMap<string, Asset>> => {
  bundle ??= build().catch((error) => {
    bundle = undefined
    throw error
  })
  return bundle
}

export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>AI Visibility</title>
  <link rel="stylesheet" href="/assets/app.css">
  <script type="module" src="/assets/app.js"></script>
</head>
<body>
  <div id="app"></div>
  <noscript>This application needs JavaScript.</noscript>
</body>
</html>
`

/**
 * No inline script or style anywhere, so the policy allows only this origin's files; the
 * pages only call this origin's /api/v1 (connect-src 'self').
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")
