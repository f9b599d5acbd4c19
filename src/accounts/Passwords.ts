import { Context, Effect, Layer } from "effect"

/** Password hashing: argon2id through Bun.password. */
export interface PasswordHasherShape {
  readonly hash: (password: string) => Effect.Effect<string>
  readonly verify: (password: string, hash: string) => Effect.Effect<boolean>
  /** A hash of nothing in particular, to spend the same time on unknown emails. */
  readonly dummyHash: Effect.Effect<string>
}

export class PasswordHasher extends Context.Tag("PasswordHasher")<PasswordHasher, PasswordHasherShape>() {}

const make = (options: { memoryCost: number; timeCost: number }) =>
  Effect.gen(function*() {
    const algorithm = { algorithm: "argon2id" as const, ...options }
    const hash = (password: string) => Effect.promise(() => Bun.password.hash(password, algorithm))
    const dummy = yield* Effect.cached(hash("not a password of anyone"))
    return {
      hash,
      verify: (password: string, stored: string) =>
        Effect.promise(() => Bun.password.verify(password, stored).catch(() => false)),
      dummyHash: dummy
    }
  })

/** Bun's argon2id defaults (64 MiB, t=2). */
export const PasswordHasherLive = Layer.effect(PasswordHasher, make({ memoryCost: 65536, timeCost: 2 }))

/** Still argon2id, with a small memory cost so test suites stay quick. */
export const PasswordHasherCheap = Layer.effect(PasswordHasher, make({ memoryCost: 1024, timeCost: 1 }))
