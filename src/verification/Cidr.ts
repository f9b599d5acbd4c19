/**
 * IP addresses and CIDR sets for the range check of verified agents (docs/verification.md).
 *
 * A set is its prefixes turned into closed intervals of numeric addresses, sorted and merged, so a
 * lookup is one binary search: IPv4 on 32-bit keys, IPv6 on four 32-bit words compared in order.
 * Nothing here throws on bad input: an unparsable address or prefix is null.
 */

/** An IPv4 address as an unsigned 32-bit number, or an IPv6 address as four 32-bit words. */
export type Ip =
  | { readonly v: 4; readonly n: number }
  | { readonly v: 6; readonly w: Uint32Array }

const parseV4Number = (s: string): number | null => {
  let n = 0
  let part = 0
  let digits = 0
  let parts = 0
  for (let i = 0; i <= s.length; i++) {
    const c = i === s.length ? 46 : s.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || part > 255 || parts === 4) return null
      n = n * 256 + part
      parts++
      part = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      // A leading zero would be octal to some parsers: refuse "01".
      if (digits === 1 && part === 0) return null
      part = part * 10 + (c - 48)
      if (++digits > 3) return null
    } else return null
  }
  return parts === 4 ? n : null
}

const parseV6Words = (input: string): Uint32Array | null => {
  let s = input
  const zone = s.indexOf("%")
  if (zone !== -1) s = s.slice(0, zone)
  if (s.length < 2 || s.length > 45) return null
  const groups: Array<number> = []
  const halves = s.split("::")
  if (halves.length > 2) return null
  const parseSide = (side: string, out: Array<number>, last: boolean): boolean => {
    if (side === "") return true
    const items = side.split(":")
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (last && i === items.length - 1 && item.includes(".")) {
        const v4 = parseV4Number(item)
        if (v4 === null) return false
        out.push(v4 >>> 16, v4 & 0xffff)
        continue
      }
      if (item.length === 0 || item.length > 4 || !/^[0-9a-fA-F]+$/.test(item)) return false
      out.push(parseInt(item, 16))
    }
    return true
  }
  if (halves.length === 2) {
    const head: Array<number> = []
    const tail: Array<number> = []
    if (!parseSide(halves[0]!, head, false) || !parseSide(halves[1]!, tail, true)) return null
    if (head.length + tail.length > 7) return null
    groups.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail)
  } else if (!parseSide(s, groups, true) || groups.length !== 8) return null
  const w = new Uint32Array(4)
  for (let i = 0; i < 4; i++) w[i] = ((groups[2 * i]! << 16) >>> 0) + groups[2 * i + 1]!
  return w
}

/**
 * Parses a client IP as logs give it: dotted IPv4, IPv6 (compressed, with a zone, in brackets, or
 * IPv4-mapped `::ffff:a.b.c.d`, which is taken as the IPv4 address). Null when it is not an address.
 */
export const parseIp = (raw: string): Ip | null => {
  let s = raw.trim()
  if (s.length === 0) return null
  if (s.includes(":")) {
    if (s.startsWith("[")) s = s.slice(1, s.indexOf("]") === -1 ? s.length : s.indexOf("]"))
    const w = parseV6Words(s)
    if (w === null) return null
    if (w[0] === 0 && w[1] === 0 && w[2] === 0xffff) return { v: 4, n: w[3]! }
    return { v: 6, w }
  }
  const n = parseV4Number(s)
  return n === null ? null : { v: 4, n }
}

/** A prefix as its first and last address. */
export type Cidr =
  | { readonly v: 4; readonly lo: number; readonly hi: number }
  | { readonly v: 6; readonly lo: Uint32Array; readonly hi: Uint32Array }

/** "a.b.c.d/n" or "x::/n" (a bare address is a /32 or /128). Host bits are ignored. */
export const parseCidr = (raw: string): Cidr | null => {
  const s = raw.trim()
  const slash = s.indexOf("/")
  const ip = parseIp(slash === -1 ? s : s.slice(0, slash))
  if (ip === null) return null
  const isV6Text = s.slice(0, slash === -1 ? s.length : slash).includes(":")
  const max = ip.v === 4 ? 32 : 128
  let bits = max
  if (slash !== -1) {
    const t = s.slice(slash + 1)
    if (!/^\d{1,3}$/.test(t)) return null
    bits = Number(t)
    // An IPv4-mapped IPv6 prefix counts its bits from the IPv6 side.
    if (ip.v === 4 && isV6Text) bits -= 96
    if (bits < 0 || bits > max) return null
  }
  if (ip.v === 4) {
    const size = 2 ** (32 - bits)
    const lo = Math.floor(ip.n / size) * size
    return { v: 4, lo, hi: lo + size - 1 }
  }
  const lo = new Uint32Array(4)
  const hi = new Uint32Array(4)
  for (let i = 0; i < 4; i++) {
    const keep = Math.max(0, Math.min(32, bits - 32 * i))
    const mask = keep === 0 ? 0 : keep === 32 ? 0xffffffff : (0xffffffff << (32 - keep)) >>> 0
    lo[i] = (ip.w[i]! & mask) >>> 0
    hi[i] = (lo[i]! | (~mask >>> 0)) >>> 0
  }
  return { v: 6, lo, hi }
}

const cmp6 = (a: Uint32Array, ai: number, b: Uint32Array, bi: number): number => {
  for (let k = 0; k < 4; k++) {
    const x = a[ai + k]!
    const y = b[bi + k]!
    if (x !== y) return x < y ? -1 : 1
  }
  return 0
}

/** The address right after `w` (null past the last one). */
const next6 = (w: Uint32Array): Uint32Array | null => {
  const out = Uint32Array.from(w)
  for (let k = 3; k >= 0; k--) {
    if (out[k] !== 0xffffffff) {
      out[k] = out[k]! + 1
      return out
    }
    out[k] = 0
  }
  return null
}

/** A set of prefixes, answering "is this address in it?" with one binary search. */
export interface CidrSet {
  readonly has: (ip: Ip) => boolean
  /** Merged intervals held (for reports). */
  readonly size: number
}

export const makeCidrSet = (cidrs: ReadonlyArray<Cidr>): CidrSet => {
  const v4 = cidrs.filter((c): c is Extract<Cidr, { v: 4 }> => c.v === 4).sort((a, b) => a.lo - b.lo)
  const lo4: Array<number> = []
  const hi4: Array<number> = []
  for (const c of v4) {
    const last = hi4.length - 1
    if (last >= 0 && c.lo <= hi4[last]! + 1) hi4[last] = Math.max(hi4[last]!, c.hi)
    else {
      lo4.push(c.lo)
      hi4.push(c.hi)
    }
  }
  const starts4 = Float64Array.from(lo4)
  const ends4 = Float64Array.from(hi4)

  const v6 = cidrs.filter((c): c is Extract<Cidr, { v: 6 }> => c.v === 6).sort((a, b) => cmp6(a.lo, 0, b.lo, 0))
  const lo6: Array<Uint32Array> = []
  const hi6: Array<Uint32Array> = []
  for (const c of v6) {
    const last = hi6.length - 1
    const after = last >= 0 ? next6(hi6[last]!) : null
    if (last >= 0 && (after === null || cmp6(c.lo, 0, after, 0) <= 0)) {
      if (cmp6(c.hi, 0, hi6[last]!, 0) > 0) hi6[last] = c.hi
    } else {
      lo6.push(c.lo)
      hi6.push(c.hi)
    }
  }
  const starts6 = new Uint32Array(lo6.length * 4)
  const ends6 = new Uint32Array(hi6.length * 4)
  lo6.forEach((w, i) => starts6.set(w, i * 4))
  hi6.forEach((w, i) => ends6.set(w, i * 4))
  const n6 = lo6.length

  const has = (ip: Ip): boolean => {
    if (ip.v === 4) {
      // The last interval starting at or before the address.
      let a = 0
      let b = starts4.length - 1
      let found = -1
      while (a <= b) {
        const m = (a + b) >>> 1
        if (starts4[m]! <= ip.n) {
          found = m
          a = m + 1
        } else b = m - 1
      }
      return found !== -1 && ip.n <= ends4[found]!
    }
    let a = 0
    let b = n6 - 1
    let found = -1
    while (a <= b) {
      const m = (a + b) >>> 1
      if (cmp6(starts6, m * 4, ip.w, 0) <= 0) {
        found = m
        a = m + 1
      } else b = m - 1
    }
    return found !== -1 && cmp6(ip.w, 0, ends6, found * 4) <= 0
  }
  return { has, size: starts4.length + n6 }
}

/**
 * Every prefix found in an operator's file, whatever its shape: the Google/OpenAI/Bing/Apple JSON
 * (`prefixes: [{ipv4Prefix | ipv6Prefix}]`), any other JSON holding CIDR strings, or plain text
 * with one prefix per line. Strings that are not prefixes are ignored.
 */
export const prefixesIn = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const visit = (v: unknown, depth: number) => {
    if (depth > 8) return
    if (typeof v === "string") {
      if (/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(v.trim()) && parseCidr(v) !== null) found.push(v.trim())
    } else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1)
    else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) visit(x, depth + 1)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (parsed !== undefined) visit(parsed, 0)
  else {
    for (const line of text.split(/\r?\n/)) {
      const t = line.replace(/#.*/, "").trim()
      if (t !== "" && parseCidr(t) !== null) found.push(t.includes("/") ? t : t.includes(":") ? `${t}/128` : `${t}/32`)
    }
  }
  return found
}
