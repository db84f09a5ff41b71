/**
 * Sets of node slots as bitsets (bit s of word s >>> 5). Bits at or beyond the snapshot's node
 * count are always 0, so popcounts count nodes.
 */

/** Words needed for `slots` bits. */
export function wordsFor(slots: number): number {
  return (slots + 31) >>> 5;
}

/** Whether slot `s` is in the set. */
export function hasBit(bits: Uint32Array, s: number): boolean {
  return ((bits[s >>> 5]! >>> (s & 31)) & 1) === 1;
}

/** Adds slot `s`. */
export function setBit(bits: Uint32Array, s: number): void {
  bits[s >>> 5]! |= 1 << (s & 31);
}

/** Removes slot `s`. */
export function clearBit(bits: Uint32Array, s: number): void {
  bits[s >>> 5]! &= ~(1 << (s & 31));
}

/** Number of set bits in one word. */
export function popcount32(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Number of set bits in the first `words` words. */
export function popcount(bits: Uint32Array, words: number): number {
  let n = 0;
  for (let w = 0; w < words; w++) {
    const x = bits[w]!;
    if (x !== 0) n += popcount32(x);
  }
  return n;
}

/** A copy of `bits` with room for at least `words` words. */
export function grown(bits: Uint32Array, words: number): Uint32Array {
  if (bits.length >= words) return bits;
  const out = new Uint32Array(Math.max(words, bits.length * 2));
  out.set(bits);
  return out;
}

/**
 * Writes up to `max` set slots into `out`, in slot order starting at `start` and wrapping around
 * (slots below `n` only); returns how many were written.
 */
export function collectFrom(bits: Uint32Array, n: number, start: number, max: number, out: Int32Array): number {
  if (max <= 0 || n === 0) return 0;
  const words = wordsFor(n);
  const w0 = start >>> 5;
  let k = 0;
  // First the part of the start word at or above `start`, then the following words, then wrap.
  for (let step = 0; step <= words && k < max; step++) {
    const w = (w0 + step) % words;
    let x = bits[w]!;
    if (step === 0) x &= ~0 << (start & 31);
    else if (step === words) x &= ~(~0 << (start & 31));
    while (x !== 0 && k < max) {
      const low = x & -x;
      out[k++] = (w << 5) + 31 - Math.clz32(low);
      x ^= low;
    }
  }
  return k;
}
