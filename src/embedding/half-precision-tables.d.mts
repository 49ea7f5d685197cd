// Types of half-precision-tables.mjs (plain JavaScript, loaded by the model thread).

/** The float16 bits of a float32 given as its bits, rounded to nearest, ties to even. */
export declare function float16Bits(bits: number): number;

/**
 * The model with each large float32 table that only Gather reads stored as float16, a Cast back to
 * float32 after each of its Gathers; the same bytes if it has none (or carries subgraphs).
 */
export declare function halfPrecisionTables(
  model: Uint8Array,
  minBytes?: number /* default 4 MiB */,
): { model: Uint8Array; tables: string[] };

/** Runs `use` with the bytes of the ONNX file `weights`, its lookup tables at half precision, converted in a throwaway thread. */
export declare function withHalfPrecisionTables<T>(weights: string, use: (model: Uint8Array) => Promise<T>): Promise<T>;
