/**
 * Finding entity names and aliases in an answer in one pass, whatever the names: an Aho-Corasick
 * automaton over case-folded code points (the model is the catalog's literal automaton,
 * src/catalog/Classifier.ts). It finds exactly what one case-insensitive Unicode regular expression
 * of the names would (the form docs/observations.md describes: longest first, a space in a name
 * matching any run of white space, a word boundary only on a side where the name has a word
 * character), without the regular expression's cost, which grew with the number of names times
 * the length of the text.
 *
 * Cost: building is linear in the names' total length; a scan reads each character once, and at
 * each character visits the names ending there (at most the longest name's length of them: names
 * that are suffixes of one another), so it is linear in the text for bounded name lengths and does
 * not depend on how many names there are.
 */

/** JavaScript's `\s` (with or without the u flag): what a space in a name matches a run of. */
export const isSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff

const singleCodePoint = (s: string): boolean => {
  const c = s.codePointAt(0)
  return c !== undefined && s.length === (c > 0xffff ? 2 : 1)
}

/**
 * Where the case mappings disagree with the RegExp engine's simple case folding: the dotless ı is its
 * own class (its upper case I is not), and three pairs fold together without being case mappings.
 */
const FOLD_EXCEPTIONS: ReadonlyMap<number, number> = new Map([[0x131, 0x131], [0x1fd3, 0x390], [0x1fe3, 0x3b0], [0xfb05, 0xfb06]])

/** Code points from here up have no case (the last cased one is Adlam's, U+1E943). */
const CASELESS_FROM = 0x1f000

const computeFold = (cp: number): number => {
  const exception = FOLD_EXCEPTIONS.get(cp)
  if (exception !== undefined) return exception
  const s = String.fromCodePoint(cp)
  const upper = s.toUpperCase()
  const base = singleCodePoint(upper) ? upper : s
  const lower = base.toLowerCase()
  return (singleCodePoint(lower) ? lower : base).codePointAt(0)!
}

/** Folds of the Basic Multilingual Plane as computed (0: not yet; U+0000 folds to itself anyway). */
const bmpFolds = new Int32Array(0x10000)

/**
 * One code point per class of code points a case-insensitive Unicode RegExp (flags `iu`) treats as
 * equal: two code points match each other there exactly when their folds are equal
 * (test/observations/names.test.ts checks every cased code point against the engine).
 */
export const caseFold = (cp: number): number => {
  if (cp < 128) return cp >= 65 && cp <= 90 ? cp | 32 : cp
  if (cp < 0x10000) {
    const known = bmpFolds[cp]!
    if (known !== 0) return known
    return (bmpFolds[cp] = computeFold(cp))
  }
  return cp >= CASELESS_FROM ? cp : computeFold(cp)
}

const WORD_CHAR = /^[\p{L}\p{N}\p{M}_]$/u
const bmpWord = new Uint8Array(0x10000) // 0 not yet, 1 no, 2 yes

/** `[\p{L}\p{N}\p{M}_]` of a code point (a lone surrogate is none of them). */
export const isWordCodePoint = (cp: number): boolean => {
  if (cp < 128) return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57) || cp === 95
  if (cp < 0x10000) {
    const known = bmpWord[cp]!
    if (known !== 0) return known === 2
    const word = cp >= 0xd800 && cp <= 0xdfff ? false : WORD_CHAR.test(String.fromCharCode(cp))
    bmpWord[cp] = word ? 2 : 1
    return word
  }
  return WORD_CHAR.test(String.fromCodePoint(cp))
}

/** Whether a word character comes right after `end`. */
const wordAfter = (text: string, end: number) => end < text.length && isWordCodePoint(text.codePointAt(end)!)

/** A name as the matcher takes it: a run of white space in it matches any run of white space in the text. */
export interface MatcherName {
  readonly text: string
  /** A word character may not come right before (after) an occurrence. */
  readonly boundaryBefore: boolean
  readonly boundaryAfter: boolean
}

export interface NameMatcher {
  /**
   * The occurrences, left to right and not overlapping, as a RegExp of the names in priority order
   * (the first name that occurs at a position wins there, the search goes on after its end) finds
   * them: [start, end) offsets of the text, flat.
   */
  readonly scan: (text: string) => ReadonlyArray<number>
  /** The automaton steps of the last scan (transitions, failure links and names visited): a test's measure of work. */
  readonly lastWork: () => number
}

/** The symbol of white space in the automaton (a whole run of it in the text). */
const SPACE_SYMBOL = 1

/**
 * The automaton's edges. Most states of long names have one child: that edge is kept with the state
 * (two typed arrays, read in place); the edges of states with several children go to an
 * open-addressing hash of (state, symbol) -> state in typed arrays (a Map of numbers cost some ten
 * times more per step); the root has a dense row, where most steps go.
 */
const makeEdges = (states: number, symbols: number) => {
  let bits = 4
  while (1 << bits < states * 2) bits++
  const size = 1 << bits
  const mask = size - 1
  const shift = 32 - bits
  const keys = new Int32Array(size).fill(-1)
  const labels = new Int32Array(size)
  const targets = new Int32Array(size)
  const root = new Int32Array(symbols).fill(-1)
  /** The symbol of a state's only edge, -1 for none, -2 when its edges are in the hash. */
  const onlyLabel = new Int32Array(states).fill(-1)
  const onlyTarget = new Int32Array(states)
  // Fibonacci hashing: the high bits of the product
  const slot = (state: number, symbol: number) => Math.imul(state ^ Math.imul(symbol, 0x85ebca77), 0x9e3779b1) >>> shift
  const hashed = (state: number, symbol: number): number => {
    for (let i = slot(state, symbol); ; i = (i + 1) & mask) {
      const at = keys[i]!
      if (at === -1) return -1
      if (at === state && labels[i] === symbol) return targets[i]!
    }
  }
  const hash = (state: number, symbol: number, target: number): void => {
    let i = slot(state, symbol)
    while (keys[i] !== -1) i = (i + 1) & mask
    keys[i] = state
    labels[i] = symbol
    targets[i] = target
  }
  return {
    get: (state: number, symbol: number): number => {
      if (state === 0) return root[symbol]!
      const only = onlyLabel[state]!
      if (only === symbol) return onlyTarget[state]!
      return only === -2 ? hashed(state, symbol) : -1
    },
    set: (state: number, symbol: number, target: number): void => {
      if (state === 0) {
        root[symbol] = target
        return
      }
      const only = onlyLabel[state]!
      if (only === -1) {
        onlyLabel[state] = symbol
        onlyTarget[state] = target
        return
      }
      if (only >= 0) {
        hash(state, only, onlyTarget[state]!)
        onlyLabel[state] = -2
      }
      hash(state, symbol, target)
    }
  }
}

/**
 * A matcher of `names`, in priority order (the first of the names that occurs at a position is the
 * one found there). Names are trimmed (no white space at either end); empty names are ignored.
 */
export const makeNameMatcher = (names: ReadonlyArray<MatcherName>): NameMatcher => {
  // Dense symbol ids: 0 for a code point no name holds, 1 for white space, then one per folded code
  // point of the names. ASCII is read through a table (folded, white space included).
  const asciiIds = new Int32Array(128)
  for (let c = 0; c < 128; c++) if (isSpace(c)) asciiIds[c] = SPACE_SYMBOL
  const otherIds = new Map<number, number>()
  let symbolCount = 2
  const symbolOf = (cp: number): number => {
    if (cp < 128) return asciiIds[cp]!
    if (isSpace(cp)) return SPACE_SYMBOL
    const folded = caseFold(cp)
    return folded < 128 ? asciiIds[folded]! : otherIds.get(folded) ?? 0
  }
  const sequences: Array<Array<number>> = []
  let total = 0
  for (const name of names) {
    const sequence: Array<number> = []
    for (const ch of name.text) {
      const cp = ch.codePointAt(0)!
      let symbol = symbolOf(cp)
      if (symbol === 0) {
        symbol = symbolCount++
        const folded = caseFold(cp)
        if (folded < 128) {
          asciiIds[folded] = symbol
          if (folded >= 97 && folded <= 122) asciiIds[folded - 32] = symbol
        } else otherIds.set(folded, symbol)
      }
      if (symbol === SPACE_SYMBOL && sequence[sequence.length - 1] === SPACE_SYMBOL) continue
      sequence.push(symbol)
    }
    sequences.push(sequence)
    total += sequence.length
  }

  // The trie (states numbered as created, the root 0), with each state's children as a linked list.
  const edges = makeEdges(total + 1, symbolCount)
  const depth = new Int32Array(total + 1)
  const firstChild = new Int32Array(total + 1).fill(-1)
  const nextSibling = new Int32Array(total + 1).fill(-1)
  const label = new Int32Array(total + 1)
  /** The names ending at a state as a list in priority order: the first, then each one's next. */
  const firstEnd = new Int32Array(total + 1).fill(-1)
  const nextEnd = new Int32Array(names.length).fill(-1)
  const lastEnd = new Int32Array(total + 1).fill(-1)
  const lengths = new Int32Array(names.length)
  let stateCount = 1
  sequences.forEach((sequence, nameId) => {
    lengths[nameId] = sequence.length
    if (sequence.length === 0) return
    let state = 0
    for (const symbol of sequence) {
      let next = edges.get(state, symbol)
      if (next === -1) {
        next = stateCount++
        edges.set(state, symbol, next)
        depth[next] = depth[state]! + 1
        label[next] = symbol
        nextSibling[next] = firstChild[state]!
        firstChild[state] = next
      }
      state = next
    }
    if (firstEnd[state] === -1) firstEnd[state] = nameId
    else nextEnd[lastEnd[state]!] = nameId
    lastEnd[state] = nameId
  })

  // Failure links breadth first; `output` is the nearest state on the failure chain (the state itself
  // included) where names end, 0 for none.
  const fail = new Int32Array(stateCount)
  const output = new Int32Array(stateCount)
  const queue = new Int32Array(stateCount)
  let tail = 1
  for (let head = 0; head < tail; head++) {
    const state = queue[head]!
    for (let child = firstChild[state]!; child !== -1; child = nextSibling[child]!) {
      let f = 0
      if (state !== 0) {
        const symbol = label[child]!
        for (f = fail[state]!; ; f = fail[f]!) {
          const t = edges.get(f, symbol)
          if (t !== -1) {
            f = t
            break
          }
          if (f === 0) break
        }
      }
      fail[child] = f
      output[child] = firstEnd[child] !== -1 ? child : output[f]!
      queue[tail++] = child
    }
  }
  const boundaryBefore = Uint8Array.from(names, (name) => (name.boundaryBefore ? 1 : 0))
  const boundaryAfter = Uint8Array.from(names, (name) => (name.boundaryAfter ? 1 : 0))

  // Per scan: for each symbol of the text its start offset, and the best name starting there.
  let starts = new Int32Array(0)
  let best = new Int32Array(0)
  /** Whether a word character comes right before the symbol. */
  let afterWord = new Uint8Array(0)
  let work = 0

  const scan = (text: string): ReadonlyArray<number> => {
    work = 0
    const found: Array<number> = []
    if (stateCount === 1 || text.length === 0) return found
    if (starts.length < text.length + 1) {
      starts = new Int32Array(text.length + 1)
      best = new Int32Array(text.length + 1)
      afterWord = new Uint8Array(text.length + 1)
    }
    let previousWord = false
    let count = 0 // symbols read
    let state = 0
    let i = 0
    const n = text.length
    while (i < n) {
      const at = i
      let cp = text.charCodeAt(i++)
      if (cp >= 0xd800 && cp <= 0xdbff && i < n) {
        const low = text.charCodeAt(i)
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = (cp - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000
          i++
        }
      }
      const symbol = symbolOf(cp)
      if (symbol === SPACE_SYMBOL) while (i < n && isSpace(text.charCodeAt(i))) i++
      const index = count++
      starts[index] = at
      best[index] = -1
      afterWord[index] = previousWord ? 1 : 0
      previousWord = symbol !== SPACE_SYMBOL && isWordCodePoint(cp)
      /** Whether a word character follows: read once per position, when a name ending here needs it. */
      let wordNext = -1
      // One automaton step: follow failure links until an edge on this symbol (or the root); a
      // character no name holds leads back to the root at once.
      work++
      if (symbol === 0) state = 0
      else {
        for (;;) {
          const next = edges.get(state, symbol)
          if (next !== -1) {
            state = next
            break
          }
          if (state === 0) break
          state = fail[state]!
          work++
        }
      }
      // The names ending here: each is a candidate at its start symbol, kept when it has the best priority there.
      for (let o = output[state]!; o !== 0; o = output[fail[o]!]!) {
        const from = index - depth[o]! + 1
        const current = best[from]!
        for (let nameId = firstEnd[o]!; nameId !== -1; nameId = nextEnd[nameId]!) {
          work++
          if (current !== -1 && current <= nameId) break
          if (boundaryBefore[nameId] === 1 && afterWord[from] === 1) continue
          if (boundaryAfter[nameId] === 1) {
            if (wordNext === -1) wordNext = wordAfter(text, i) ? 1 : 0
            if (wordNext === 1) continue
          }
          best[from] = nameId
          break
        }
      }
    }
    // Left to right, not overlapping: the best name at each start reached, then on after its end.
    for (let s = 0; s < count; ) {
      const nameId = best[s]!
      if (nameId === -1) {
        s++
        continue
      }
      const last = s + lengths[nameId]! - 1
      const endCp = text.codePointAt(starts[last]!)!
      found.push(starts[s]!, starts[last]! + (endCp > 0xffff ? 2 : 1))
      s = last + 1
    }
    return found
  }
  return { scan, lastWork: () => work }
}
