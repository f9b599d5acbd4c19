import { Context, Effect, Layer, Schema } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"

/**
 * The guard against server-side request forgery (docs/webhooks.md, "Where a webhook may point"):
 * a webhook URL is https on port 443 or 8443, and every address its host resolves to is globally
 * reachable by the IANA special-purpose address registries of IPv4 and IPv6 (loopback, private,
 * shared, link-local and cloud metadata, documentation, benchmarking, multicast, IPv4-mapped and
 * -translated, local-use NAT64, Teredo, 6to4... are refused; the well-known NAT64 prefix is judged
 * by the IPv4 it carries).
 * Checked when the URL is saved and again on the address resolved for each attempt, so a name
 * that later resolves to an internal address (DNS rebinding) is refused at send time; the sender
 * then connects to the very address checked (see `pinnedTarget`), never resolving the name again.
 */

/** The addresses a host name resolves to; a fake in tests. */
export interface AddressResolverShape {
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, UnresolvableHost>
}
export class AddressResolver extends Context.Tag("AddressResolver")<AddressResolver, AddressResolverShape>() {}

export class UnresolvableHost extends Schema.TaggedError<UnresolvableHost>()("UnresolvableHost", { host: Schema.String }) {}

export const AddressResolverLive = Layer.succeed(AddressResolver, {
  resolve: (host) =>
    Effect.tryPromise({
      try: () => lookup(host, { all: true, verbatim: true }),
      catch: () => new UnresolvableHost({ host })
    }).pipe(
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new UnresolvableHost({ host }) }),
      Effect.map((answers) => answers.map((answer) => answer.address))
    )
})

const v4Octets = (address: string): ReadonlyArray<number> | null => {
  const parts = address.split(".")
  if (parts.length !== 4) return null
  const octets = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : NaN))
  return octets.every((octet) => octet >= 0 && octet <= 255) ? octets : null
}

/** An IPv4 prefix: its first address as a number, its length in bits, and what it is. */
type V4Range = readonly [number, number, string]

const v4Number = (o: ReadonlyArray<number>) => ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!
const v4 = (text: string, what: string): V4Range => {
  const [address, bits] = text.split("/")
  return [v4Number(address!.split(".").map(Number)), Number(bits), what]
}
const inV4 = (value: number, [base, bits]: V4Range) => bits === 0 || (value >>> (32 - bits)) === (base >>> (32 - bits))

/**
 * The IANA IPv4 Special-Purpose Address Registry, every entry whose "Globally Reachable" is not
 * True (RFC 6890 and its updates), plus multicast (224.0.0.0/4, its own registry) and the
 * deprecated 6to4 relay anycast (192.88.99.0/24, RFC 7526). The globally reachable entries inside
 * 192.0.0.0/24 (192.0.0.9 and 192.0.0.10, anycast services) are let through, as the registry says.
 */
const V4_REFUSED: ReadonlyArray<V4Range> = [
  v4("0.0.0.0/8", "unspecified (this network)"),
  v4("10.0.0.0/8", "private"),
  v4("100.64.0.0/10", "shared (carrier-grade NAT)"),
  v4("127.0.0.0/8", "loopback"),
  v4("169.254.0.0/16", "link-local (cloud metadata)"),
  v4("172.16.0.0/12", "private"),
  v4("192.0.0.0/29", "reserved (IETF protocol assignments)"),
  v4("192.0.0.8/32", "reserved (IETF protocol assignments)"),
  v4("192.0.0.11/32", "reserved (IETF protocol assignments)"),
  v4("192.0.0.12/30", "reserved (IETF protocol assignments)"),
  v4("192.0.0.16/28", "reserved (IETF protocol assignments)"),
  v4("192.0.0.32/27", "reserved (IETF protocol assignments)"),
  v4("192.0.0.64/26", "reserved (IETF protocol assignments)"),
  v4("192.0.0.128/25", "reserved (IETF protocol assignments)"),
  v4("192.0.2.0/24", "reserved (documentation)"),
  v4("192.88.99.0/24", "reserved (deprecated 6to4 relay)"),
  v4("192.168.0.0/16", "private"),
  v4("198.18.0.0/15", "reserved (benchmarking)"),
  v4("198.51.100.0/24", "reserved (documentation)"),
  v4("203.0.113.0/24", "reserved (documentation)"),
  v4("224.0.0.0/4", "multicast"),
  v4("240.0.0.0/4", "reserved (and broadcast)")
]

/** Why an IPv4 address is not a public one, or null when it is. */
const v4Refusal = (o: ReadonlyArray<number>): string | null => {
  const value = v4Number(o)
  for (const range of V4_REFUSED) if (inV4(value, range)) return range[2]
  return null
}

/** The 8 groups of an IPv6 address (a dotted IPv4 tail becomes the last two), or null. */
const v6Groups = (address: string): ReadonlyArray<number> | null => {
  let text = address.toLowerCase()
  const zone = text.indexOf("%")
  if (zone >= 0) text = text.slice(0, zone)
  const lastColon = text.lastIndexOf(":")
  if (text.slice(lastColon + 1).includes(".")) {
    // A dotted IPv4 tail is the last two groups.
    const octets = v4Octets(text.slice(lastColon + 1))
    if (octets === null) return null
    const hex = (high: number, low: number) => ((high << 8) | low).toString(16)
    text = `${text.slice(0, lastColon + 1)}${hex(octets[0]!, octets[1]!)}:${hex(octets[2]!, octets[3]!)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return null
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? parseInt(group, 16) : NaN)))
  const head = parse(halves[0]!)
  const rest = halves.length === 2 ? parse(halves[1]!) : []
  const given = head.length + rest.length
  if (halves.length === 1 ? given !== 8 : given > 7) return null
  const groups = [...head, ...new Array<number>(8 - given).fill(0), ...rest]
  return groups.every((group) => Number.isInteger(group)) ? groups : null
}

/** An IPv6 prefix: its first groups, its length in bits, and what it is. */
type V6Range = readonly [ReadonlyArray<number>, number, string]

const inV6 = (g: ReadonlyArray<number>, [base, bits]: V6Range) => {
  for (let i = 0; i * 16 < bits; i++) {
    const take = Math.min(16, bits - i * 16)
    const mask = (0xffff << (16 - take)) & 0xffff
    if ((g[i]! & mask) !== ((base[i] ?? 0) & mask)) return false
  }
  return true
}

/**
 * Inside global unicast (2000::/3), the entries of the IANA IPv6 Special-Purpose Address Registry
 * that are globally reachable (True): let through before the refusals below.
 */
const V6_GLOBAL: ReadonlyArray<V6Range> = [
  [[0x2001, 0x1, 0, 0, 0, 0, 0, 1], 128, "PCP anycast"],
  [[0x2001, 0x1, 0, 0, 0, 0, 0, 2], 128, "TURN anycast"],
  [[0x2001, 0x1, 0, 0, 0, 0, 0, 3], 128, "DNS-SD SRP anycast"],
  [[0x2001, 0x3], 32, "AMT"],
  [[0x2001, 0x4, 0x112], 48, "AS112-v6"],
  [[0x2001, 0x20], 28, "ORCHIDv2"],
  [[0x2001, 0x30], 28, "drone remote ID"]
]

/** Inside global unicast, the registry's entries that are not globally reachable (False or N/A). */
const V6_REFUSED: ReadonlyArray<V6Range> = [
  [[0x2001, 0], 32, "reserved (Teredo)"],
  [[0x2001, 0x2, 0], 48, "reserved (benchmarking)"],
  [[0x2001, 0xdb8], 32, "reserved (documentation)"],
  [[0x2001, 0], 23, "reserved (IETF protocol assignments)"],
  [[0x2002], 16, "reserved (6to4)"],
  [[0x3fff, 0], 20, "reserved (documentation)"]
]

/**
 * Why an IPv6 address is not a public one, or null when it is: only global unicast (2000::/3) is,
 * less the special-purpose entries that are not globally reachable; outside it, only the
 * well-known NAT64 prefix 64:ff9b::/96 (globally reachable), judged by the IPv4 it carries.
 */
const v6Refusal = (g: ReadonlyArray<number>): string | null => {
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  const embedded = () => v4Refusal([g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255])
  if ((g[0]! & 0xe000) === 0x2000) {
    if (V6_GLOBAL.some((range) => inV6(g, range))) return null
    const refused = V6_REFUSED.find((range) => inV6(g, range))
    return refused === undefined ? null : refused[2]
  }
  // 64:ff9b::a.b.c.d (NAT64, well-known prefix): a translator would connect to that IPv4.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) {
    const why = embedded()
    return why === null ? null : `${why} (in NAT64)`
  }
  if (zeros(0, 8)) return "unspecified"
  if (zeros(0, 7) && g[7] === 1) return "loopback"
  if (zeros(0, 5) && g[5] === 0xffff) return "IPv4-mapped"
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return "IPv4-translated"
  if (zeros(0, 6)) return "IPv4-compatible (deprecated)"
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "reserved (local-use NAT64)"
  if (g[0] === 0x100 && zeros(1, 3)) return "reserved (discard-only)"
  if ((g[0]! & 0xfe00) === 0xfc00) return "private (unique local)"
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local"
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local (deprecated)"
  if ((g[0]! & 0xff00) === 0xff00) return "multicast"
  return "reserved (not global unicast)"
}

/** Why `address` (an IP literal) may not be a webhook target, or null when it is public. */
export const addressRefusal = (address: string): string | null => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const kind = isIP(bare.split("%")[0]!)
  if (kind === 4) return v4Refusal(v4Octets(bare)!)
  if (kind === 6) {
    const groups = v6Groups(bare)
    return groups === null ? "not an address" : v6Refusal(groups)
  }
  return "not an address"
}

export type UrlCheck =
  /**
   * `url`: the URL as WHATWG URL parses it (what is stored and sent; no fragment); `address`: the
   * one IP the host resolved to (the first answer) or is, every answer judged.
   */
  | { readonly _tag: "Allowed"; readonly url: URL; readonly address: string }
  | { readonly _tag: "Refused"; readonly reason: string }

const refused = (reason: string): UrlCheck => ({ _tag: "Refused", reason })

/** The ports a public webhook may use: https's own and its usual alternative (docs/webhooks.md). */
export const WEBHOOK_PORTS: ReadonlyArray<number> = [443, 8443]

export const MAX_URL_LENGTH = 2048

/** The port a URL connects to (its scheme's default when it names none). */
const portOf = (url: URL) => (url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port))

/**
 * Whether a webhook may be sent to `text`: the URL's form (https, or http with allowPrivate; no
 * credentials; port 443 or 8443, any but 0 with allowPrivate), then every address its host
 * resolves to (resolved with allowPrivate too, but not judged then). The URL allowed is the parsed
 * one, so what is stored, shown and sent is what was judged (`https://a\\@b/` is host a, path /@b/).
 * A refusal names the address only when the URL spells it: what a name resolves to stays untold.
 */
export const checkWebhookUrl = (
  text: string,
  allowPrivate: boolean
): Effect.Effect<UrlCheck, never, AddressResolver> =>
  Effect.gen(function*() {
    if (text.length > MAX_URL_LENGTH) return refused(`url is too long: at most ${MAX_URL_LENGTH} characters`)
    let url: URL
    try {
      url = new URL(text.trim())
    } catch {
      return refused("url must be an absolute https:// URL")
    }
    if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
      return refused("url must be https://")
    }
    if (url.username !== "" || url.password !== "") return refused("url must not carry credentials")
    // The fragment never goes on the wire: it is not kept either.
    url.hash = ""
    if (url.href.length > MAX_URL_LENGTH) return refused(`url is too long: at most ${MAX_URL_LENGTH} characters`)
    const port = portOf(url)
    if (port === 0 || (!allowPrivate && !WEBHOOK_PORTS.includes(port))) {
      return refused(`url port must be one of ${WEBHOOK_PORTS.join(", ")}`)
    }
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    const literal = isIP(host) !== 0
    const addresses = literal
      ? [host]
      : yield* Effect.flatMap(AddressResolver, (resolver) => resolver.resolve(host)).pipe(Effect.orElseSucceed(() => null))
    if (addresses === null || addresses.length === 0 || isIP(addresses[0]!.split("%")[0]!) === 0) {
      return refused(`url host ${host} does not resolve`)
    }
    for (const address of allowPrivate ? [] : addresses) {
      const why = addressRefusal(address)
      if (why !== null) {
        return refused(literal ? `url must not point to a ${why} address (${address})` : `url host resolves to a ${why} address`)
      }
    }
    return { _tag: "Allowed", url, address: addresses[0]! } as const
  })

/**
 * The request for an allowed URL pinned to its checked address: the URL with the address in
 * place of the name (so the HTTP client resolves nothing), the original `host` header, and for
 * https the original name as TLS server name, which is both the SNI sent and the name the
 * certificate must be valid for (none for a URL that names an IP). Null when the address cannot stand in a URL (an IPv6 zone): the
 * URL setter would keep the name silently, and the client would resolve it again.
 */
export const pinnedTarget = (
  check: { readonly url: URL; readonly address: string }
): { readonly url: string; readonly host: string; readonly serverName: string | null } | null => {
  const target = new URL(check.url.href)
  target.hostname = isIP(check.address) === 6 ? `[${check.address}]` : check.address
  const pinned = target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname
  if (isIP(pinned) === 0) return null
  const name = check.url.hostname.startsWith("[") ? check.url.hostname.slice(1, -1) : check.url.hostname
  // A URL naming an IP literal has no name to send: its certificate is checked against the IP, as before.
  return { url: target.href, host: check.url.host, serverName: isIP(name) === 0 ? name : null }
}
