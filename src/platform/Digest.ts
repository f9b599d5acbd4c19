import { timingSafeEqual } from "node:crypto"

/**
 * The last digest is remembered: a request's key is hashed for its rate-limit bucket and again
 * by the bearer check, one right after the other (the text is the request's own header value).
 */
let lastText: string | undefined
let lastDigest = ""
export const sha256Hex = (text: string) => {
  if (text === lastText) return lastDigest
  lastDigest = new Bun.CryptoHasher("sha256").update(text).digest("hex")
  lastText = text
  return lastDigest
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest()

/** Constant-time comparison of a presented secret with the expected one (digests: equal lengths). */
export const secretEquals = (presented: string, expected: string) => timingSafeEqual(sha256(presented), sha256(expected))
