import { describe, expect, it } from "bun:test"
import { createPrivateKey, createPublicKey, sign } from "node:crypto"
import { makeCidrSet, parseCidr, parseIp, prefixesIn } from "../../src/verification/Cidr.js"
import { bundledSnapshot, indexSnapshot } from "../../src/verification/Snapshot.js"
import { keyOfJwk, parseSignatureInput, signatureBase, verifyRequest, verifySignature } from "../../src/verification/WebBotAuth.js"

const set = (...cidrs: Array<string>) => makeCidrSet(cidrs.map((c) => parseCidr(c)!))
const has = (s: ReturnType<typeof set>, ip: string) => s.has(parseIp(ip)!)

describe("CIDR sets", () => {
  it("IPv4: edges of a prefix, merged neighbours, host bits ignored", () => {
    const s = set("20.171.206.0/24", "20.171.207.0/24", "10.0.0.77/8", "192.0.2.1")
    expect(has(s, "20.171.206.0")).toBe(true)
    expect(has(s, "20.171.207.255")).toBe(true)
    expect(has(s, "20.171.208.0")).toBe(false)
    expect(has(s, "20.171.205.255")).toBe(false)
    expect(has(s, "10.255.255.255")).toBe(true)
    expect(has(s, "192.0.2.1")).toBe(true)
    expect(has(s, "192.0.2.2")).toBe(false)
    expect(s.size).toBe(3)
  })
  it("IPv6: compressed forms, /56 and /128, IPv4-mapped addresses taken as IPv4", () => {
    const s = set("2600:1f28:365:8000::/56", "2001:db8::1/128", "20.0.0.0/8")
    expect(has(s, "2600:1f28:365:80ff:ffff:ffff:ffff:ffff")).toBe(true)
    expect(has(s, "2600:1f28:365:8100::")).toBe(false)
    expect(has(s, "2600:1F28:0365:8000:0:0:0:1")).toBe(true)
    expect(has(s, "2001:db8::1")).toBe(true)
    expect(has(s, "2001:db8::2")).toBe(false)
    expect(has(s, "[2001:db8::1]")).toBe(true)
    expect(has(s, "::ffff:20.1.2.3")).toBe(true)
  })
  it("refuses what is not an address or a prefix", () => {
    for (const bad of ["", "1.2.3", "1.2.3.256", "01.2.3.4", "1:2:3", "1::2::3", "abc", "1.2.3.4.5", "12345::"]) {
      expect(parseIp(bad)).toBe(null)
    }
    for (const bad of ["1.2.3.4/33", "::/129", "1.2.3.4/x", "1.2.3.4/"]) expect(parseCidr(bad)).toBe(null)
  })
  it("reads the operators' file shapes: prefixes JSON, any JSON, plain text", () => {
    expect(prefixesIn(`{"creationTime":"x","prefixes":[{"ipv4Prefix":"1.2.3.0/24"},{"ipv6Prefix":"2001:db8::/32"}]}`))
      .toEqual(["1.2.3.0/24", "2001:db8::/32"])
    expect(prefixesIn(`{"a":{"b":["5.6.7.0/24","nope"]}}`)).toEqual(["5.6.7.0/24"])
    expect(prefixesIn("# list\n9.9.9.0/24\n9.9.8.1\n\n")).toEqual(["9.9.9.0/24", "9.9.8.1/32"])
  })
  it("the bundled snapshot maps the operators' files to catalog bots", () => {
    const index = indexSnapshot(bundledSnapshot())
    expect(index.byBot.get("GPTBot")!.has(parseIp("20.171.206.10")!)).toBe(true)
    expect(index.byBot.get("GPTBot")!.has(parseIp("203.0.113.9")!)).toBe(false)
    expect(index.byBot.get("CCBot")!.has(parseIp("2600:1f28:365:8000::1")!)).toBe(true)
    expect(index.byBot.has("Bytespider")).toBe(false)
  })
  it("answers a lookup in well under a microsecond", () => {
    const index = indexSnapshot(bundledSnapshot())
    const amazon = index.byBot.get("Amazonbot")!
    const ips = Array.from({ length: 4096 }, (_, i) => parseIp(`${(i * 7) % 223 + 1}.${i % 256}.${(i * 13) % 256}.${i % 250}`)!)
    let found = 0
    const n = 400_000
    const start = performance.now()
    for (let i = 0; i < n; i++) if (amazon.has(ips[i & 4095]!)) found++
    const nsPerLookup = ((performance.now() - start) * 1e6) / n
    expect(found).toBeGreaterThanOrEqual(0)
    expect(nsPerLookup).toBeLessThan(1000)
  })
})

// RFC 9421 appendix B.1.4 (test-key-ed25519) and B.2.6 (signing a request using ed25519).
const RFC_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----`
const RFC_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`
const B26_INPUT = `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
const B26_SIGNATURE = "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:"
const B26_BASE = [
  `"date": Tue, 20 Apr 2021 02:07:55 GMT`,
  `"@method": POST`,
  `"@path": /foo`,
  `"@authority": example.com`,
  `"content-type": application/json`,
  `"content-length": 18`,
  `"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
].join("\n")
const b26Request = {
  method: "POST",
  authority: "example.com",
  path: "/foo",
  query: "param=Value&Pet=dog",
  headers: { date: "Tue, 20 Apr 2021 02:07:55 GMT", "content-type": "application/json", "content-length": "18" },
  signature: B26_SIGNATURE,
  signatureInput: B26_INPUT
}
const rfcKey = { kid: "test-key-ed25519", key: createPublicKey(RFC_PUBLIC_KEY) }

describe("Web Bot Auth (RFC 9421, Ed25519)", () => {
  it("B.2.6: the signature base is the RFC's", () => {
    expect(signatureBase(b26Request, parseSignatureInput(B26_INPUT).get("sig-b26")!)).toBe(B26_BASE)
  })
  it("B.2.6: Ed25519 is deterministic: signing the base with the RFC's private key gives the RFC's signature", () => {
    const signature = sign(null, Buffer.from(B26_BASE), createPrivateKey(RFC_PRIVATE_KEY)).toString("base64")
    expect(`sig-b26=:${signature}:`).toBe(B26_SIGNATURE)
  })
  it("B.2.6: the RFC's signature verifies; a changed component, key or time does not", () => {
    expect(verifySignature(b26Request, [rfcKey], 1618884473)).toEqual({ valid: true, label: "sig-b26", kid: "test-key-ed25519" })
    expect(verifySignature({ ...b26Request, path: "/bar" }, [rfcKey], 1618884473)).toEqual({ valid: false, reason: "signature mismatch" })
    expect(verifySignature(b26Request, [{ ...rfcKey, kid: "other" }], 1618884473).valid).toBe(false)
    expect(verifySignature(b26Request, [rfcKey], 1618884473 - 3600)).toEqual({ valid: false, reason: "created in the future" })
    const { date: _, ...noDate } = b26Request.headers
    expect(verifySignature({ ...b26Request, headers: noDate }, [rfcKey], 1618884473))
      .toEqual({ valid: false, reason: "a covered component is not in the record" })
  })
  it("B.2.6 is a plain RFC 9421 signature, not a Web Bot Auth one (no tag, no expires): verifyRequest refuses it", () => {
    expect(verifyRequest(b26Request, [rfcKey], 1618884473))
      .toEqual({ valid: false, reason: "not a Web Bot Auth signature: tag is not \"web-bot-auth\"" })
  })
  it("a directory key's keyid is its RFC 7638 thumbprint (the RFC 8037 example key)", () => {
    // RFC 8037 appendix A.3: the thumbprint of its example Ed25519 key.
    const key = keyOfJwk({ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" })
    expect(key?.kid).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
    expect(keyOfJwk({ kty: "RSA", n: "x" } as never)).toBe(null)
  })
})
