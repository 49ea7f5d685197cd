// Types of seven-bit-weights.mjs (plain JavaScript, loaded by the q8 loader's thread).

/**
 * Halves, in place, the int8 weights of every MatMulInteger whose weights have a zero point of 0
 * and a float32 scale of their own, and doubles that scale; the names of the weights changed.
 */
export declare function sevenBitWeights(model: Uint8Array): string[];
