import ort from 'onnxruntime-node';
import protobuf from 'protobufjs/minimal.js';
import { describe, expect, it } from 'vitest';
import { sevenBitWeights } from '../../src/embedding/seven-bit-weights.mjs';

const { Writer } = protobuf;

// A small dynamically quantized MatMul written field by field (onnx.proto's numbers), as
// onnxruntime's quantizer writes them: x → DynamicQuantizeLinear → MatMulInteger with the int8
// weights `w_quantized` (zero point `w_zero_point`) → Cast → Mul by x's scale × `w_scale`.
const LEN = 2;
const text = (writer: protobuf.Writer, field: number, value: string) => writer.uint32((field << 3) | LEN).string(value);
const message = (writer: protobuf.Writer, field: number, fill: (w: protobuf.Writer) => void) => {
  writer.uint32((field << 3) | LEN).fork();
  fill(writer);
  writer.ldelim();
};
function node(w: protobuf.Writer, op: string, inputs: string[], outputs: string[], to?: number) {
  message(w, 1, (n) => {
    inputs.forEach((input) => text(n, 1, input));
    outputs.forEach((output) => text(n, 2, output));
    text(n, 3, outputs[0]!);
    text(n, 4, op);
    if (to !== undefined)
      message(n, 5, (a) => {
        text(a, 1, 'to');
        a.uint32(3 << 3).int64(to);
        a.uint32(20 << 3).int32(2);
      });
  });
}
function valueInfo(w: protobuf.Writer, name: string, dims: number[]) {
  text(w, 1, name);
  message(w, 2, (type) =>
    message(type, 1, (tensorType) => {
      tensorType.uint32(1 << 3).int32(1);
      message(tensorType, 2, (shape) => dims.forEach((d) => message(shape, 1, (dim) => dim.uint32(1 << 3).int64(d))));
    }),
  );
}
const K = 4;
const N = 3;
/** Weights [K, N], row-major: every odd value, both extremes, and a few even ones. */
const WEIGHTS = [127, -127, 1, -1, 3, -3, 5, -5, 64, -64, 0, 2];
const SCALES = [0.01, 0.02, 0.005];

function model(options: { zeroPoint?: number; sharedScale?: boolean } = {}): Uint8Array {
  const w = Writer.create();
  w.uint32(1 << 3).int64(8);
  message(w, 7, (g) => {
    node(g, 'DynamicQuantizeLinear', ['x'], ['x_q', 'x_scale', 'x_zero_point']);
    node(g, 'MatMulInteger', ['x_q', 'w_quantized', 'x_zero_point', 'w_zero_point'], ['y_int']);
    node(g, 'Cast', ['y_int'], ['y_float'], 1);
    node(g, 'Mul', ['x_scale', 'w_scale'], ['y_scale']);
    node(g, 'Mul', ['y_float', 'y_scale'], ['y']);
    if (options.sharedScale) node(g, 'Mul', ['w_scale', 'w_scale'], ['other']);
    text(g, 2, 'graph');
    message(g, 5, (t) => {
      [K, N].forEach((d) => t.uint32(1 << 3).int64(d));
      t.uint32(2 << 3).int32(3);
      text(t, 8, 'w_quantized');
      t.uint32((9 << 3) | LEN).bytes(Uint8Array.from(WEIGHTS, (v) => v & 0xff));
    });
    message(g, 5, (t) => {
      t.uint32(1 << 3).int64(N);
      t.uint32(2 << 3).int32(1);
      message(t, 4, (floats) => SCALES.forEach((s) => floats.float(s)));
      text(t, 8, 'w_scale');
    });
    message(g, 5, (t) => {
      t.uint32(1 << 3).int64(N);
      t.uint32(2 << 3).int32(3);
      message(t, 5, (ints) => SCALES.forEach((_, i) => ints.int32(i === 1 ? (options.zeroPoint ?? 0) : 0)));
      text(t, 8, 'w_zero_point');
    });
    message(g, 11, (v) => valueInfo(v, 'x', [1, K]));
    message(g, 12, (v) => valueInfo(v, 'y', [1, N]));
    if (options.sharedScale) message(g, 12, (v) => valueInfo(v, 'other', [N]));
  });
  message(w, 8, (opset) => opset.uint32(2 << 3).int64(13));
  return w.finish();
}

async function run(bytes: Uint8Array, x: number[]) {
  const session = await ort.InferenceSession.create(bytes);
  try {
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from(x), [1, K]) });
    return Array.from(out['y']!.data as Float32Array);
  } finally {
    await session.release();
  }
}

/** What MatMulInteger computes, exactly: x quantized as DynamicQuantizeLinear does, by the weights. */
function exact(x: number[], weights: number[], scales: number[]) {
  const low = Math.min(0, ...x);
  const high = Math.max(0, ...x);
  const scale = Math.fround((high - low) / 255);
  const zero = Math.round(-low / scale);
  const q = x.map((v) => Math.min(255, Math.max(0, Math.round(v / scale) + zero)));
  return scales.map((s, n) => {
    let sum = 0;
    for (let k = 0; k < K; k++) sum += (q[k]! - zero) * weights[k * N + n]!;
    return Math.fround(sum * Math.fround(scale * Math.fround(s)));
  });
}

describe('sevenBitWeights', () => {
  it('halves the int8 weights, rounded half to even, within [−64, 64], and doubles their scale', async () => {
    const bytes = model();
    expect(sevenBitWeights(bytes)).toEqual(['w_quantized']);
    const halved = [64, -64, 0, 0, 2, -2, 2, -2, 32, -32, 0, 1];
    const x = [1.5, -0.25, 0.75, 2];
    // Every pair of products of uint8 by these weights fits a 16-bit integer: 2 × 255 × 64 = 32,640.
    expect(Math.max(...halved.map(Math.abs))).toBe(64);
    const y = await run(bytes, x);
    const expected = exact(
      x,
      halved,
      SCALES.map((s) => 2 * s),
    );
    y.forEach((value, n) => expect(value).toBeCloseTo(expected[n]!, 5));
    // The same product as the 8-bit weights, within the last bit of the weights.
    const before = await run(model(), x);
    y.forEach((value, n) => expect(Math.abs(value - before[n]!)).toBeLessThanOrEqual(255 * K * SCALES[n]! * 0.02));
  });

  it('leaves weights with a nonzero zero point, or a scale something else reads, as they are', () => {
    for (const options of [{ zeroPoint: 3 }, { sharedScale: true }]) {
      const bytes = model(options);
      const copy = Uint8Array.from(bytes);
      expect(sevenBitWeights(bytes)).toEqual([]);
      expect(Uint8Array.from(bytes)).toEqual(copy);
    }
  });
});
