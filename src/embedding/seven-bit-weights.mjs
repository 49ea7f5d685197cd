// @ts-check
/**
 * The int8 weights of a dynamically quantized ONNX model (the `model_quantized.onnx` exports:
 * MatMulInteger of uint8 activations by int8 weights) brought to seven bits, in place, while the
 * q8 loader reads the file (half-precision-thread.mjs).
 *
 * Why: onnxruntime's int8 matrix products do not compute the same numbers on every CPU. With AVX2,
 * and AVX-512 without VNNI, MLAS multiplies uint8 by int8 with `vpmaddubsw`, which adds each pair
 * of products into a saturating 16-bit integer: 2 × 255 × 127 = 64,770 does not fit, and the sum
 * is clipped at 32,767. With AVX-512 VNNI or AVX-VNNI (`vpdpbusd`), AMX, or SSE4.1, every sum is an
 * exact 32-bit one. So the same text embedded on an AVX2 machine and on a VNNI one came out at
 * cosine 0.984 of itself at the least (mean 0.9925; about as far as the q8 weights are from the
 * float32 ones), and a question ranked differently by machine (bench/embeddings.md, "Kernel noise").
 *
 * Every weight within [−64, 64] keeps each pair within 2 × 255 × 64 = 32,640: no kernel saturates,
 * every kernel computes the same integers, and what still differs between AVX2 and AVX-512 VNNI is
 * the float32 part of the graph: 1 − cosine 0.00025 on average instead of 0.0075 (measured under
 * QEMU's Haswell model). A weight is halved, rounded half to
 * even, and its scale doubled (exact in float32); the zero point must be 0, as the symmetric
 * quantization of weights makes it. The price is the weights' last bit: SciFact's semantic nDCG@10
 * 0.6508 → 0.6502 (p = 0.90; exact cosine over the whole corpus), and the kernels stay the fast
 * ones (a pair of 7-bit weights is still one `vpmaddubsw`).
 */
import { DATA_TYPE, graphOf, NODE, stringsOf, SUBGRAPH_OPS, TENSOR, varintOf } from './onnx-fields.mjs';

/** @typedef {import('./onnx-fields.mjs').Field} Field */

/** q/2 rounded half to even, for every int8 q (by its byte). */
const HALVED = Int8Array.from({ length: 256 }, (_, byte) => {
  const q = (byte << 24) >> 24;
  const floor = q >> 1;
  return q % 2 !== 0 && floor % 2 !== 0 ? floor + 1 : floor;
});

/**
 * The payload of a tensor stored in place (raw_data, or a packed typed field), or null when it is
 * stored elsewhere (external data) or not at all.
 * @param {Field[]} tensor
 * @param {number | null} typedField the typed field that may hold the values instead of raw_data
 */
function payloadOf(tensor, typedField) {
  if ((varintOf(tensor, TENSOR.dataLocation) ?? 0) !== 0) return null;
  const raw = tensor.find((f) => f.field === TENSOR.rawData)?.bytes;
  if (raw || typedField === null) return raw ?? null;
  const typed = tensor.filter((f) => f.field === typedField && f.bytes);
  return typed.length === 1 ? /** @type {Uint8Array} */ (typed[0]?.bytes) : null;
}

/**
 * Halves the int8 weights of every MatMulInteger whose weights are an int8 initializer with a zero
 * point of 0 and a float32 scale of its own (`<name>_scale`, beside `<name>_quantized` and
 * `<name>_zero_point`, as onnxruntime's quantizer names them) that only a Mul reads, and doubles
 * that scale. Anything else is left as it is, and a model with subgraphs entirely.
 * @param {Uint8Array} model an ONNX ModelProto, changed in place
 * @returns {string[]} the names of the weights changed
 */
export function sevenBitWeights(model) {
  const graph = graphOf(model);
  if (!graph) return [];
  const nodes = graph.nodes.filter(Boolean);
  if (nodes.some((node) => SUBGRAPH_OPS.has(stringsOf(node, NODE.opType)[0] ?? ''))) return [];
  /** @type {Map<string, Field[]>} */
  const initializers = new Map();
  for (const tensor of graph.initializers.values()) initializers.set(stringsOf(tensor, TENSOR.name)[0] ?? '', tensor);
  /** @type {Map<string, { op: string, position: number }[]>} */
  const uses = new Map();
  for (const node of nodes) {
    const op = stringsOf(node, NODE.opType)[0] ?? '';
    stringsOf(node, NODE.input).forEach((name, position) => {
      const list = uses.get(name) ?? [];
      list.push({ op, position });
      uses.set(name, list);
    });
  }
  /** @type {Map<string, string>} each weight and its zero point ('' when absent) */
  const weights = new Map();
  for (const node of nodes) {
    if (stringsOf(node, NODE.opType)[0] !== 'MatMulInteger') continue;
    const [, weight, , zeroPoint] = stringsOf(node, NODE.input);
    if (weight) weights.set(weight, zeroPoint ?? '');
  }
  /** @type {string[]} */
  const changed = [];
  for (const [name, zeroPointName] of weights) {
    const tensor = initializers.get(name);
    const scaleName = name.endsWith('_quantized') ? `${name.slice(0, -'_quantized'.length)}_scale` : null;
    const scale = scaleName ? initializers.get(scaleName) : undefined;
    if (!tensor || !scale || varintOf(tensor, TENSOR.dataType) !== DATA_TYPE.int8) continue;
    if (varintOf(scale, TENSOR.dataType) !== DATA_TYPE.float) continue;
    if (!uses.get(name)?.every((use) => use.op === 'MatMulInteger' && use.position === 1)) continue;
    const scaleUses = uses.get(/** @type {string} */ (scaleName)) ?? [];
    if (scaleUses.length !== 1 || scaleUses[0]?.op !== 'Mul') continue;
    if (zeroPointName) {
      const zeroPoint = initializers.get(zeroPointName);
      const zeros = zeroPoint ? payloadOf(zeroPoint, TENSOR.int32Data) : null;
      // Packed int32 varints of 0 and raw int8 zeros are both all-zero bytes.
      if (!zeros || zeros.some((byte) => byte !== 0)) continue;
    }
    // Weights as raw bytes only: int8 values kept as int32 varints would change length when halved.
    const values = payloadOf(tensor, null);
    const scales = payloadOf(scale, TENSOR.floatData);
    if (!values || !scales || scales.byteLength % 4 !== 0) continue;
    for (let i = 0; i < values.length; i++)
      values[i] = /** @type {number} */ (HALVED[/** @type {number} */ (values[i])]) & 0xff;
    const view = new DataView(scales.buffer, scales.byteOffset, scales.byteLength);
    for (let i = 0; i < scales.byteLength; i += 4) view.setFloat32(i, view.getFloat32(i, true) * 2, true);
    changed.push(name);
  }
  return changed;
}
