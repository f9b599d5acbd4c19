import { describe, expect, test } from "bun:test"
import {
  newcombe, roundInterval, scoreInterval, shareDelta, shareInterval, shareOfVoice, shareSumsOf, wilson
} from "../../src/platform/Statistics.js"

describe("Statistics", () => {
  test("Wilson interval against published values", () => {
    expect(roundInterval(wilson(5, 10))).toEqual([0.2366, 0.7634])
    // Newcombe (1998), table I: 81/263 -> 0.2553 to 0.3662
    expect(roundInterval(wilson(81, 263))).toEqual([0.2553, 0.3662])
    expect(roundInterval(wilson(0, 10))).toEqual([0, 0.2775])
    expect(roundInterval(wilson(10, 10))).toEqual([0.7225, 1])
    expect(wilson(0, 0)).toBeNull()
    expect(scoreInterval(wilson(5, 10))).toEqual([23.66, 76.34])
  })

  test("Newcombe's hybrid score interval against the published example", () => {
    // Newcombe (1998), method 10: 56/70 − 48/80 = 0.2000, interval 0.0524 to 0.3339
    const d = newcombe(56, 70, 48, 80)
    expect(roundInterval(d.interval)).toEqual([0.0524, 0.3339])
    expect(d.significant).toBe(true)
    const flat = newcombe(5, 10, 5, 10)
    expect(flat.delta).toBe(0)
    expect(flat.significant).toBe(false)
    expect(newcombe(1, 0, 1, 2)).toEqual({ delta: null, interval: null, significant: false })
  })

  test("share of voice: the ratio estimator's variance from its definition", () => {
    const population = [
      { mentioned: true, entities: 2 },
      { mentioned: false, entities: 3 },
      { mentioned: true, entities: 1 },
      { mentioned: false, entities: 0 }
    ]
    const share = shareOfVoice(shareSumsOf(population))
    const s = 2 / 6
    const mBar = 6 / 4
    const direct = population.reduce((acc, o) => acc + ((o.mentioned ? 1 : 0) - s * o.entities) ** 2, 0) / (4 * 3 * mBar * mBar)
    expect(share.share).toBeCloseTo(s, 12)
    expect(share.variance!).toBeCloseTo(direct, 12)
    const interval = shareInterval(share)!
    expect(interval[0]).toBeCloseTo(Math.max(0, s - 1.959964 * Math.sqrt(direct)), 12)
    expect(interval[1]).toBeCloseTo(Math.min(1, s + 1.959964 * Math.sqrt(direct)), 12)
    expect(shareInterval(shareOfVoice(shareSumsOf([{ mentioned: true, entities: 1 }])))).toBeNull()
    const delta = shareDelta(share, share)
    expect(delta.delta).toBe(0)
    expect(delta.significant).toBe(false)
  })

  test("a share whose variance is 0 (s = 0 or 1) gets the Wilson interval over the observations naming an entity, not a point", () => {
    // n = 3, two of them naming only this entity: s = 1, var = 0; Wilson(2, 2).
    const all = shareOfVoice(shareSumsOf([{ mentioned: true, entities: 1 }, { mentioned: true, entities: 1 }, { mentioned: false, entities: 0 }]))
    expect([all.share, all.variance]).toEqual([1, 0])
    expect(shareInterval(all)).toEqual(wilson(2, 2))
    // Never named, beside another entity named twice: s = 0, Wilson(0, 2) = [0, 0.6576].
    const none = shareOfVoice(shareSumsOf([{ mentioned: false, entities: 1 }, { mentioned: false, entities: 1 }]))
    expect(roundInterval(shareInterval(none))).toEqual([0, 0.6576])
    // Nothing named at all: no share, no interval.
    expect(shareInterval(shareOfVoice(shareSumsOf([{ mentioned: false, entities: 0 }, { mentioned: false, entities: 0 }])))).toBeNull()
  })
})
