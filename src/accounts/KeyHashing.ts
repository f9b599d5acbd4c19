import { Context, Layer } from "effect"
import { sha256Hex } from "../platform/Digest.js"

export const KEY_PREFIX = "aivkey_"

/** Random secrets (API keys, session tokens) and their SHA-256 digests: only digests are stored. */
export interface KeyHashingShape {
  /** A new API key: `aivkey_` + 32 random bytes in URL-safe base64 without padding (50 characters). */
  readonly generateKey: () => string
  /** A new session token: 32 random bytes, URL-safe base64. */
  readonly generateToken: () => string
  /** Lower-case hex SHA-256 of the UTF-8 text. */
  readonly hash: (secret: string) => string
}

export class KeyHashing extends Context.Tag("KeyHashing")<KeyHashing, KeyHashingShape>() {}

const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")

export const KeyHashingLive = Layer.succeed(KeyHashing, {
  generateKey: () => KEY_PREFIX + randomToken(),
  generateToken: randomToken,
  hash: sha256Hex
})

/** Display form of a key in lists: the first 14 characters and an ellipsis (the OpenAPI document). */
export const displayPrefix = (key: string) => key.slice(0, 14) + "\u2026"
