import { Context, Effect, Layer, Schema } from "effect"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"

/**
 * The guard against server-side request forgery (docs/webhooks.md, "Where a webhook may point"):
 * a webhook URL is https, and every address its host resolves to is public: not loopback,
 * private, shared (CGNAT), link-local (cloud metadata included), multicast or reserved, in IPv4
 * and IPv6 (IPv4-mapped, -compatible and NAT64 addresses are judged by the IPv4 they carry).
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

/** Why an IPv4 address is not a public one, or null when it is. */
const v4Refusal = (o: ReadonlyArray<number>): string | null => {
  const [a, b] = [o[0]!, o[1]!]
  if (a === 0) return "unspecified"
  if (a === 127) return "loopback"
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private"
  if (a === 100 && b >= 64 && b <= 127) return "shared (carrier-grade NAT)"
  if (a === 169 && b === 254) return "link-local (cloud metadata)"
  if (a === 192 && b === 0 && o[2] === 0) return "reserved"
  if (a === 198 && (b === 18 || b === 19)) return "reserved (benchmarking)"
  if (a >= 224) return "multicast or reserved"
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

const v6Refusal = (g: ReadonlyArray<number>): string | null => {
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  const embedded = () => v4Refusal([g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255])
  if (zeros(0, 8)) return "unspecified"
  if (zeros(0, 7) && g[7] === 1) return "loopback"
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64): the IPv4 decides.
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return embedded()
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded()
  if ((g[0]! & 0xfe00) === 0xfc00) return "private (unique local)"
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local"
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local"
  if ((g[0]! & 0xff00) === 0xff00) return "multicast"
  // 6to4 carries an IPv4 in groups 1-2.
  if (g[0] === 0x2002) return v4Refusal([g[1]! >> 8, g[1]! & 255, g[2]! >> 8, g[2]! & 255])
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "reserved (documentation)"
  return null
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
  /** `address`: the one IP the host resolved to (the first answer) or is, every answer judged. */
  | { readonly _tag: "Allowed"; readonly url: URL; readonly address: string }
  | { readonly _tag: "Refused"; readonly reason: string }

const refused = (reason: string): UrlCheck => ({ _tag: "Refused", reason })

/**
 * Whether a webhook may be sent to `text`: the URL's form (https, or http with allowPrivate; no
 * credentials), then every address its host resolves to (resolved with allowPrivate too, but not
 * judged then).
 */
export const checkWebhookUrl = (
  text: string,
  allowPrivate: boolean
): Effect.Effect<UrlCheck, never, AddressResolver> =>
  Effect.gen(function*() {
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
    if (text.length > 2048) return refused("url is too long: at most 2048 characters")
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    const addresses = isIP(host) !== 0
      ? [host]
      : yield* Effect.flatMap(AddressResolver, (resolver) => resolver.resolve(host)).pipe(Effect.orElseSucceed(() => null))
    if (addresses === null || addresses.length === 0 || isIP(addresses[0]!.split("%")[0]!) === 0) {
      return refused(`url host ${host} does not resolve`)
    }
    for (const address of allowPrivate ? [] : addresses) {
      const why = addressRefusal(address)
      if (why !== null) return refused(`url must not point to a ${why} address (${address})`)
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
