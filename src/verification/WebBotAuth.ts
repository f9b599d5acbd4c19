import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto"

/**
 * Web Bot Auth: RFC 9421 HTTP message signatures with Ed25519, keys from the operator's key
 * directory (a JWK set; keyid is the key's RFC 7638 thumbprint). docs/verification.md.
 * Pure: parse, build the signature base, verify. Nothing here throws on bad input.
 */

/** The parts of a request a signature may cover that a log record can carry. */
export interface SignedRequest {
  readonly method: string
  /** Host (the `@authority`), lower case. */
  readonly authority: string
  readonly path: string
  /** Query string without "?", "" when none. */
  readonly query: string
  /** Header values by lower-case name (signature-agent among them). */
  readonly headers: Readonly<Record<string, string>>
  readonly signature: string
  readonly signatureInput: string
}

export interface DirectoryKey {
  readonly kid: string
  readonly key: KeyObject
}

/** An Ed25519 JWK ({kty: "OKP", crv: "Ed25519", x}) as a key with its RFC 7638 thumbprint. */
export const keyOfJwk = (jwk: { readonly kty?: unknown; readonly crv?: unknown; readonly x?: unknown; readonly kid?: unknown }): DirectoryKey | null => {
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") return null
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" })
    const thumbprint = createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`).digest("base64url")
    return { kid: thumbprint, key }
  } catch {
    return null
  }
}

interface Member {
  /** The inner list's items as written ("@method", "signature-agent";key="a"). */
  readonly components: ReadonlyArray<{ readonly name: string; readonly raw: string; readonly params: string }>
  /** The inner list with its parameters as written: the `@signature-params` value. */
  readonly raw: string
  readonly params: Readonly<Record<string, string | number>>
}

/** Top-level members of a structured-field dictionary, split on commas outside strings and lists. */
const dictionaryMembers = (field: string): Array<[string, string]> => {
  const out: Array<[string, string]> = []
  let depth = 0
  let inString = false
  let start = 0
  const push = (end: number) => {
    const part = field.slice(start, end).trim()
    const eq = part.indexOf("=")
    if (eq > 0) out.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()])
  }
  for (let i = 0; i < field.length; i++) {
    const c = field[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"") inString = true
    else if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "," && depth === 0) {
      push(i)
      start = i + 1
    }
  }
  push(field.length)
  return out
}

const parseParams = (text: string): Record<string, string | number> => {
  const params: Record<string, string | number> = {}
  const re = /;\s*([a-z*][a-z0-9_.*-]*)(?:=("(?:[^"\\]|\\.)*"|-?\d+|[A-Za-z*][^;\s]*))?/g
  let m: RegExpExecArray | null
  while ((m = re.exec(text)) !== null) {
    const v = m[2]
    params[m[1]!] = v === undefined ? "?1" : v.startsWith("\"") ? v.slice(1, -1).replace(/\\(.)/g, "$1") : /^-?\d+$/.test(v) ? Number(v) : v
  }
  return params
}

export const parseSignatureInput = (field: string): Map<string, Member> => {
  const out = new Map<string, Member>()
  for (const [label, value] of dictionaryMembers(field)) {
    if (!value.startsWith("(")) continue
    const close = value.indexOf(")")
    if (close === -1) continue
    const inner = value.slice(1, close)
    const components: Array<{ name: string; raw: string; params: string }> = []
    const item = /"((?:[^"\\]|\\.)*)"((?:;[^\s"]+(?:="(?:[^"\\]|\\.)*")?)*)/g
    let m: RegExpExecArray | null
    while ((m = item.exec(inner)) !== null) components.push({ name: m[1]!, raw: m[0], params: m[2] ?? "" })
    out.set(label, { components, raw: value, params: parseParams(value.slice(close + 1)) })
  }
  return out
}

export const parseSignatures = (field: string): Map<string, Buffer> => {
  const out = new Map<string, Buffer>()
  for (const [label, value] of dictionaryMembers(field)) {
    const m = /^:([A-Za-z0-9+/=]*):/.exec(value)
    if (m !== null) out.set(label, Buffer.from(m[1]!, "base64"))
  }
  return out
}

/** The origin named by Signature-Agent: a string item ("https://x") or the first member of a dictionary form. */
export const signatureAgentOrigin = (value: string): string | null => {
  let v = value.trim()
  const members = dictionaryMembers(v)
  if (!v.startsWith("\"") && members.length > 0) v = members[0]![1]
  v = v.replace(/^"|"$/g, "").replace(/^<|>$/g, "")
  try {
    const url = new URL(v)
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : null
  } catch {
    return null
  }
}

/** The signature base of RFC 9421 section 2.5, or null when a covered component is not available. */
export const signatureBase = (request: SignedRequest, member: Member): string | null => {
  const lines: Array<string> = []
  for (const c of member.components) {
    let value: string | undefined
    if (c.params !== "" && c.name !== "signature-agent") return null
    switch (c.name) {
      case "@method":
        value = request.method.toUpperCase()
        break
      case "@authority":
        value = request.authority.toLowerCase()
        break
      case "@path":
        value = request.path
        break
      case "@query":
        value = `?${request.query}`
        break
      case "@scheme":
        value = "https"
        break
      case "@target-uri":
        value = `https://${request.authority.toLowerCase()}${request.path}${request.query === "" ? "" : `?${request.query}`}`
        break
      case "@request-target":
        value = `${request.path}${request.query === "" ? "" : `?${request.query}`}`
        break
      default: {
        if (c.name.startsWith("@")) return null
        const header = request.headers[c.name]
        if (header === undefined) return null
        if (c.params !== "") {
          // `"signature-agent";key="a"`: one member of the dictionary form.
          const key = /;key="([^"]*)"/.exec(c.params)?.[1]
          const member = dictionaryMembers(header).find(([k]) => k === key)
          if (key === undefined || member === undefined) return null
          value = member[1]
        } else value = header.trim()
      }
    }
    lines.push(`${c.raw}: ${value}`)
  }
  lines.push(`"@signature-params": ${member.raw}`)
  return lines.join("\n")
}

export type SignatureCheck =
  | { readonly valid: true; readonly label: string; readonly kid: string }
  | { readonly valid: false; readonly reason: string }

/** The longest validity window (`expires - created`) a Web Bot Auth signature may declare, in seconds. */
export const MAX_VALIDITY_SECONDS = 24 * 60 * 60

/** How far a signature's `created` may be ahead of the hit, and its `expires` behind it (clock skew), in seconds. */
const SKEW_SECONDS = 60

/**
 * Why a signature is not a Web Bot Auth one (draft-meunier-web-bot-auth-architecture over RFC 9421),
 * or null when it is: `tag="web-bot-auth"`, a `keyid`, integer `created` and `expires` with expires
 * after created and at most MAX_VALIDITY_SECONDS later, and `@authority` covered, with `signature-agent`
 * too when the request carries that header. A signature covering nothing would vouch for any request.
 */
export const webBotAuthProfileFailure = (request: SignedRequest, member: Member): string | null => {
  const { tag, keyid, created, expires } = member.params
  if (tag !== "web-bot-auth") return "tag is not \"web-bot-auth\""
  if (typeof keyid !== "string" || keyid === "") return "no keyid"
  if (typeof created !== "number" || !Number.isSafeInteger(created)) return "no created"
  if (typeof expires !== "number" || !Number.isSafeInteger(expires)) return "no expires"
  if (expires <= created) return "expires is not after created"
  if (expires - created > MAX_VALIDITY_SECONDS) return `validity window over ${MAX_VALIDITY_SECONDS} seconds`
  const covered = new Set(member.components.map((c) => c.name))
  if (!covered.has("@authority")) return "@authority is not covered"
  if (request.headers["signature-agent"] !== undefined && !covered.has("signature-agent")) return "signature-agent is not covered"
  return null
}

/**
 * Verifies one RFC 9421 signature (Ed25519) at `nowSec` (Unix seconds): its keyid in `keys`, created
 * no later than a minute after `nowSec`, not expired more than a minute before it, the base built
 * from the request, the signature matching. Any profile's own rules come on top (verifyRequest).
 */
export const verifySignature = (request: SignedRequest, keys: ReadonlyArray<DirectoryKey>, nowSec: number): SignatureCheck =>
  check(request, keys, nowSec, () => null)

/**
 * Verifies the request's Web Bot Auth signatures against `keys` at time `nowSec` (Unix seconds): one
 * signature that meets the Web Bot Auth profile (webBotAuthProfileFailure) and verifies
 * (verifySignature) is enough.
 */
export const verifyRequest = (request: SignedRequest, keys: ReadonlyArray<DirectoryKey>, nowSec: number): SignatureCheck =>
  check(request, keys, nowSec, webBotAuthProfileFailure)

const check = (
  request: SignedRequest,
  keys: ReadonlyArray<DirectoryKey>,
  nowSec: number,
  profileFailure: (request: SignedRequest, member: Member) => string | null
): SignatureCheck => {
  const inputs = parseSignatureInput(request.signatureInput)
  const signatures = parseSignatures(request.signature)
  let reason = "no signature"
  for (const [label, member] of inputs) {
    const sig = signatures.get(label)
    if (sig === undefined) continue
    const alg = member.params.alg
    if (alg !== undefined && alg !== "ed25519") {
      reason = `algorithm ${String(alg)} not supported`
      continue
    }
    const failure = profileFailure(request, member)
    if (failure !== null) {
      reason = `not a Web Bot Auth signature: ${failure}`
      continue
    }
    const created = member.params.created
    const expires = member.params.expires
    if (typeof created === "number" && created > nowSec + SKEW_SECONDS) {
      reason = "created in the future"
      continue
    }
    if (typeof expires === "number" && expires < nowSec - SKEW_SECONDS) {
      reason = "expired"
      continue
    }
    const key = keys.find((k) => k.kid === member.params.keyid)
    if (key === undefined) {
      reason = "unknown keyid"
      continue
    }
    const base = signatureBase(request, member)
    if (base === null) {
      reason = "a covered component is not in the record"
      continue
    }
    let ok = false
    try {
      ok = verify(null, Buffer.from(base, "utf8"), key.key, sig)
    } catch {
      ok = false
    }
    if (ok) return { valid: true, label, kid: key.kid }
    reason = "signature mismatch"
  }
  return { valid: false, reason }
}
