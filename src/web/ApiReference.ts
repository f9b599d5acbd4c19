import { publicOpenApi } from "../api.js"

/**
 * The API reference page (/api/public/v1/docs): rendered on the server from the same OpenAPI
 * document as /api/public/v1/openapi.json, as plain HTML and one stylesheet. No script, no
 * CDN: it works offline and under a strict Content-Security-Policy.
 */

/**
 * The document is read as plain JSON: every value is `unknown` and each field is looked at through
 * `field`, so a property the renderer expects and the document lacks reads as absent, never as a crash.
 */
type JsonObject = { readonly [key: string]: unknown }
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)
const field = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined)
const entries = (value: unknown): Array<[string, unknown]> => (isObject(value) ? Object.entries(value) : [])
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const escape = (text: unknown) =>
  String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1)

/** A compact type label of a JSON Schema: `string`, `integer`, `AgentsResponse`, `array of Brand`, `"7d" | "30d"`. */
const typeLabel = (schema: unknown): string => {
  if (!isObject(schema)) return "any"
  const ref = schema["$ref"]
  if (typeof ref === "string" && ref !== "") return `<a href="#schema-${escape(refName(ref))}">${escape(refName(ref))}</a>`
  if (Array.isArray(schema["enum"])) return schema["enum"].map((v: unknown) => `<code>${escape(JSON.stringify(v))}</code>`).join(" | ")
  if (Array.isArray(schema["anyOf"])) return schema["anyOf"].map(typeLabel).join(" | ")
  if (Array.isArray(schema["oneOf"])) return schema["oneOf"].map(typeLabel).join(" | ")
  if (schema["type"] === "array") return `array of ${typeLabel(schema["items"])}`
  if (schema["type"] === "object" && schema["additionalProperties"] && typeof schema["additionalProperties"] === "object") {
    return `map of string to ${typeLabel(schema["additionalProperties"])}`
  }
  if (Array.isArray(schema["type"])) return schema["type"].map(escape).join(" | ")
  const format = schema["format"] ? ` (${escape(schema["format"])})` : ""
  return `${escape(schema["type"] ?? "any")}${format}`
}

const constraints = (schema: unknown) => {
  if (!isObject(schema)) return ""
  const parts: Array<string> = []
  if (schema["pattern"]) parts.push(`pattern <code>${escape(schema["pattern"])}</code>`)
  if (schema["minimum"] !== undefined) parts.push(`min ${escape(schema["minimum"])}`)
  if (schema["maximum"] !== undefined) parts.push(`max ${escape(schema["maximum"])}`)
  if (schema["default"] !== undefined) parts.push(`default <code>${escape(JSON.stringify(schema["default"]))}</code>`)
  return parts.length === 0 ? "" : `<div class="muted">${parts.join(", ")}</div>`
}

const propertiesTable = (schema: unknown) => {
  const properties = entries(field(schema, "properties"))
  if (properties.length === 0) return `<p class="muted">${typeLabel(schema)}</p>`
  const required = new Set(list(field(schema, "required")))
  return `<table><thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead><tbody>${
    properties.map(([name, property]) =>
      `<tr><td><code>${escape(name)}</code>${required.has(name) ? "" : " <span class=\"muted\">optional</span>"}</td><td>${
        typeLabel(property)
      }</td><td>${escape(field(property, "description"))}${constraints(property)}</td></tr>`
    ).join("")
  }</tbody></table>`
}

const operation = (method: string, path: string, op: unknown) => {
  const parameters = list(field(op, "parameters"))
  const responses = entries(field(op, "responses"))
  const anchor = `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-")
  const summary = field(op, "summary")
  const description = field(op, "description")
  const requestBody = field(op, "requestBody")
  return `<section class="op" id="${escape(anchor)}">
<h3><span class="method ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
${summary ? `<p><strong>${escape(summary)}</strong></p>` : ""}
${description ? `<p>${escape(description)}</p>` : ""}
${
    parameters.length === 0 ? "" : `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${
      parameters.map((p) =>
        `<tr><td><code>${escape(field(p, "name"))}</code>${field(p, "required") ? " <span class=\"req\">required</span>" : ""}</td><td>${
          escape(field(p, "in"))
        }</td><td>${typeLabel(field(p, "schema"))}</td><td>${escape(field(p, "description"))}${constraints(field(p, "schema"))}</td></tr>`
      ).join("")
    }</tbody></table>`
  }
${
    requestBody
      ? `<h4>Request body</h4><p>${
        entries(field(requestBody, "content")).map(([type, c]) => `<code>${escape(type)}</code>: ${typeLabel(field(c, "schema"))}`).join("<br>")
      }</p>`
      : ""
  }
<h4>Responses</h4><table><thead><tr><th>Status</th><th>Description</th><th>Body</th></tr></thead><tbody>${
    responses.map(([status, response]) =>
      `<tr><td>${escape(status)}</td><td>${escape(field(response, "description"))}</td><td>${
        entries(field(response, "content")).map(([, c]) => typeLabel(field(c, "schema"))).join(", ")
      }</td></tr>`
    ).join("")
  }</tbody></table>
</section>`
}

const render = (): string => {
  // The generated document as JSON (its own type describes what it holds, not how this page reads it).
  const spec: unknown = publicOpenApi
  const info = field(spec, "info")
  const title = field(info, "title")
  const ops = entries(field(spec, "paths")).flatMap(([path, item]) =>
    ["get", "post", "put", "patch", "delete"].filter((m) => field(item, m)).map((m) => ({ method: m, path, op: field(item, m) }))
  )
  const schemas = entries(field(field(spec, "components"), "schemas")).sort(([a], [b]) => a.localeCompare(b))
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}: API reference</title><link rel="stylesheet" href="/assets/reference.css"></head>
<body><nav><h2>${escape(title)}</h2><p class="muted">version ${escape(field(info, "version"))}</p>
<p><a href="/api/public/v1/openapi.json">openapi.json</a> · <a href="/">web application</a></p><ul>${
    ops.map(({ method, path }) =>
      `<li><a href="#${escape(`${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-"))}"><span class="method ${escape(method)}">${
        escape(method.toUpperCase())
      }</span> ${escape(path.replace("/api/public/v1", ""))}</a></li>`
    ).join("")
  }</ul></nav>
<main><h1>${escape(title)}</h1><p>${escape(field(info, "description"))}</p>
<h2>Authentication</h2><p>Every request carries <code>Authorization: Bearer aivkey_…</code>: an API key created in the web application
(Settings › Security › API keys). Errors are JSON <code>{"error": "…"}</code>; 402 and 429 add their fields.
The same key authenticates the MCP server at <code>/mcp</code>.</p>
<h2>Endpoints</h2>${ops.map(({ method, op, path }) => operation(method, path, op)).join("\n")}
<h2>Schemas</h2>${
    schemas.map(([name, schema]) =>
      `<section class="schema" id="schema-${escape(name)}"><h3>${escape(name)}</h3>${
        field(schema, "description") ? `<p>${escape(field(schema, "description"))}</p>` : ""
      }${propertiesTable(schema)}</section>`
    ).join("\n")
  }</main></body></html>`
}

let page: string | undefined
export const apiReferenceHtml = () => (page ??= render())

/**
 * Colours meet WCAG AA contrast (4.5:1) for their text, on white and on the code background alike;
 * below 800 px the endpoint list stacks above the content and long paths, names and tables wrap, so
 * the page never scrolls sideways (test/web/reference-page.test.ts, at 390 and 1280 px).
 */
export const REFERENCE_CSS = `
body { margin: 0; display: flex; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111827; }
nav { width: 320px; flex: none; height: 100vh; overflow: auto; position: sticky; top: 0; padding: 16px; background: #f9fafb; border-right: 1px solid #e5e7eb; box-sizing: border-box; }
nav ul { list-style: none; padding: 0; margin: 0; } nav li { margin: 2px 0; } nav a { color: #111827; text-decoration: none; font-size: 13px; }
main { padding: 24px 32px; max-width: 1000px; min-width: 0; overflow-wrap: anywhere; }
h3 { margin-top: 0; } .op, .schema { border: 1px solid #e5e7eb; border-radius: 8px; padding: 16px; margin: 16px 0; }
table { width: 100%; border-collapse: collapse; margin-bottom: 8px; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { color: #4b5563; } code { font-family: ui-monospace, Menlo, monospace; font-size: 13px; background: #f3f4f6; padding: 1px 4px; border-radius: 4px; }
.method { display: inline-block; min-width: 44px; text-align: center; font-size: 12px; font-weight: 700; color: #fff; border-radius: 4px; padding: 0 4px; }
.method.get { background: #1d4ed8; } .method.post { background: #15803d; }
.muted { color: #4b5563; } .req { color: #b91c1c; font-size: 12px; } a { color: #1d4ed8; }
@media (max-width: 800px) {
  body { display: block; }
  nav { width: auto; height: auto; position: static; border-right: 0; border-bottom: 1px solid #e5e7eb; }
  main { padding: 16px; }
  .op, .schema { padding: 12px; }
  table { table-layout: fixed; } th, td { padding: 4px; }
}
`
