import { FASTLY_LOG_FORMAT } from "../../ingestion/formats/fastly.js"
import { copyButton, h } from "./dom.js"
import { PLAN_FOR, planLabel } from "./labels.js"

/**
 * The set-up of each log source (docs/ingestion.md, "Log sources"), with this brand's URL and
 * site_id filled in: what to paste where on each platform, and the `ship` command for log files.
 */
interface Source {
  readonly name: string
  /** The plan entitlement it needs: a drain delivery or a batch (`ship`). */
  readonly needs: "drain" | "batch"
  readonly steps: ReadonlyArray<string>
  /** What to copy: a URL, a format string or a command. */
  readonly paste: (drain: string, siteId: string, origin: string) => string
}

const SOURCES: ReadonlyArray<Source> = [
  {
    name: "Vercel",
    needs: "drain",
    steps: ["Team or Project Settings > Drains > Custom endpoint: paste the URL, JSON or NDJSON, add the header Authorization: Bearer <API key>."],
    paste: (drain) => `${drain}&format=vercel`
  },
  {
    name: "Cloudflare Logpush",
    needs: "drain",
    steps: [
      "Analytics & Logs > Logpush > Create a Logpush job > HTTP destination: paste this endpoint (header_Authorization sets the header; put your key in place of <API key>).",
      "Dataset HTTP requests; fields ClientRequestUserAgent, ClientRequestHost, ClientRequestURI, ClientRequestMethod, ClientRequestReferer, ClientIP, ClientCountry, EdgeResponseStatus, EdgeStartTimestamp, RayID."
    ],
    paste: (drain) => `${drain}&format=cloudflare&header_Authorization=Bearer%20<API key>`
  },
  {
    name: "Fastly",
    needs: "drain",
    steps: [
      "Logging > HTTPS > Create endpoint: URL <drain URL>&format=fastly, custom header Authorization = Bearer <API key>, content type application/json, newline-delimited JSON.",
      "Log format: paste the format string below. Fastly's domain check (/.well-known/fastly/logging/challenge) is answered by this server."
    ],
    paste: () => FASTLY_LOG_FORMAT
  },
  {
    name: "Akamai DataStream 2",
    needs: "drain",
    steps: ["Create stream, log format JSON; destination Custom HTTPS with this endpoint, authentication None, custom header Authorization = Bearer <API key>."],
    paste: (drain) => `${drain}&format=akamai`
  },
  {
    name: "Netlify",
    needs: "drain",
    steps: ["Logs > Log Drains > Enable a log drain: General HTTP endpoint, log type Traffic logs, this URL, custom header Authorization = Bearer <API key>."],
    paste: (drain) => `${drain}&format=netlify`
  },
  {
    name: "CloudFront",
    needs: "batch",
    steps: ["Standard logs go to S3: copy them down (aws s3 sync) and ship them with this command."],
    paste: (_drain, siteId, origin) => `bun run cli ship ./cf-logs/*.gz --site ${siteId} --key <API key> --url ${origin}`
  },
  {
    name: "nginx / Apache",
    needs: "batch",
    steps: ["Ship the combined-format access logs (rotated .gz files too) with this command, or point a log shipper's HTTP sink (Vector) at the drain URL with &format=combined."],
    paste: (_drain, siteId, origin) => `bun run cli ship /var/log/nginx/access.log* --site ${siteId} --key <API key> --url ${origin}`
  }
]

/** What the account's plan allows: sources it lacks say which plan they need instead of failing with a 403. */
export interface Entitlements {
  readonly plan: string
  readonly drain: boolean
  readonly batch: boolean
}

const planNote = (source: Source, entitled: Entitlements | undefined) => {
  if (entitled === undefined || entitled[source.needs]) return null
  const needed = planLabel(PLAN_FOR[source.needs])
  return h(
    "p",
    { class: "notice", "data-needs-plan": PLAN_FOR[source.needs] },
    source.needs === "drain"
      ? `Log drains need the ${needed} plan or higher; this account is on the ${planLabel(entitled.plan)} plan, so deliveries are refused until it is upgraded.`
      : `Shipping log files needs the ${needed} plan or higher; this account is on the ${planLabel(entitled.plan)} plan.`
  )
}

export const logSourcesPanel = (drain: string, siteId: string, entitled?: Entitlements, open = false) => {
  const origin = location.origin
  return h(
    "details",
    { class: "log-sources", open },
    h("summary", null, "Set up a log source (Vercel, Cloudflare, Fastly, Akamai, Netlify, CloudFront, nginx/Apache)"),
    ...SOURCES.map((source) => {
      const text = source.paste(drain, siteId, origin)
      return h(
        "div",
        { "data-source": source.name },
        h("h3", null, source.name, " ", h("span", { class: "pill-plan" }, `${planLabel(PLAN_FOR[source.needs])} plan`)),
        planNote(source, entitled),
        ...source.steps.map((step) => h("p", { class: "muted" }, step.replace("<drain URL>", drain))),
        h("p", null, h("code", null, text), " ", copyButton(() => text, "Copy", `Copy the ${source.name} set-up`))
      )
    })
  )
}
