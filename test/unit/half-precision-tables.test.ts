import { getFloat16, setFloat16 } from '@petamoriken/float16';
import ort from 'onnxruntime-node';
import protobuf from 'protobufjs/minimal.js';
import { describe, expect, it } from 'vitest';
import { float16Bits, halfPrecisionTables } from '../../src/embedding/half-precision-tables.mjs';

const { Writer } = protobuf;

/** The float16 bits @petamoriken/float16 gives a float32 (its own bits). */
function referenceBits(bits: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, bits);
  const value = view.getFloat32(0);
  setFloat16(view, 0, value);
  return view.getUint16(0);
}
const floatBits = (value: number) => {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  return view.getUint32(0);
};

describe('float16Bits', () => {
  it('rounds like @petamoriken/float16, bit for bit, at every edge and on random floats', () => {
    const edges = [
      0,
      -0,
      1,
      -1,
      0.1,
      1 / 3,
      65504,
      65519.99,
      65520,
      -65520,
      1e10,
      Infinity,
      -Infinity,
      NaN,
      2 ** -14,
      2 ** -14 - 2 ** -25,
      2 ** -24,
      2 ** -25,
      2 ** -25 + 2 ** -40,
      3 * 2 ** -26,
      2 ** -26,
      1e-30,
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      1 + 2 ** -11 + 2 ** -20,
      2048 + 1,
      2048 + 3,
    ];
    for (const value of edges)
      expect(float16Bits(floatBits(value)), String(value)).toBe(referenceBits(floatBits(value)));
    let state = 12345;
    for (let i = 0; i < 200_000; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const bits = (state ^ (state << 7)) >>> 0;
      const expected = referenceBits(bits);
      // Any NaN is a NaN: both give one, the payload is not ours to keep.
      if ((expected & 0x7c00) === 0x7c00 && (expected & 0x3ff) !== 0) expect(float16Bits(bits) & 0x7e00).toBe(0x7e00);
      else expect(float16Bits(bits)).toBe(expected);
    }
  });
});

// A small ONNX model written field by field (onnx.proto's numbers): `rows = Gather(table, ids)`,
// and `scaled = Mul(other, two)` when the table also feeds another operator.
const LEN = 2;
const text = (writer: protobuf.Writer, field: number, value: string) => writer.uint32((field << 3) | LEN).string(value);
const message = (writer: protobuf.Writer, field: number, fill: (w: protobuf.Writer) => void) => {
  writer.uint32((field << 3) | LEN).fork();
  fill(writer);
  writer.ldelim();
};
function tensor(w: protobuf.Writer, name: string, dims: number[], values: number[]) {
  for (const dim of dims) w.uint32(1 << 3).int64(dim);
  w.uint32(2 << 3).int32(1);
  text(w, 8, name);
  const raw = new Uint8Array(new Float32Array(values).buffer);
  w.uint32((9 << 3) | LEN).bytes(raw);
}
function valueInfo(w: protobuf.Writer, name: string, elemType: number, dims: number[]) {
  text(w, 1, name);
  message(w, 2, (type) =>
    message(type, 1, (tensorType) => {
      tensorType.uint32(1 << 3).int32(elemType);
      message(tensorType, 2, (shape) => dims.forEach((d) => message(shape, 1, (dim) => dim.uint32(1 << 3).int64(d))));
    }),
  );
}
function node(w: protobuf.Writer, op: string, inputs: string[], outputs: string[], name: string) {
  message(w, 1, (n) => {
    inputs.forEach((input) => text(n, 1, input));
    outputs.forEach((output) => text(n, 2, output));
    text(n, 3, name);
    text(n, 4, op);
  });
}
const TABLE = Array.from({ length: 4 * 3 }, (_, i) => (i + 1) / 3 + 1e-4 * i);
function model(alsoMultiplied: boolean, tableAsInput = false): Uint8Array {
  const w = Writer.create();
  w.uint32(1 << 3).int64(8);
  text(w, 2, 'half-precision-tables test');
  message(w, 7, (g) => {
    node(g, 'Gather', ['table', 'ids'], ['rows'], 'lookup');
    if (alsoMultiplied) node(g, 'Mul', ['table', 'two'], ['scaled'], 'scale');
    text(g, 2, 'graph');
    message(g, 5, (t) => tensor(t, 'table', [4, 3], TABLE));
    message(g, 5, (t) => tensor(t, 'two', [1], [2]));
    message(g, 11, (v) => valueInfo(v, 'ids', 7, [2]));
    if (tableAsInput) message(g, 11, (v) => valueInfo(v, 'table', 1, [4, 3]));
    message(g, 12, (v) => valueInfo(v, 'rows', 1, [2, 3]));
    if (alsoMultiplied) message(g, 12, (v) => valueInfo(v, 'scaled', 1, [4, 3]));
  });
  message(w, 8, (opset) => opset.uint32(2 << 3).int64(13));
  return w.finish();
}
async function run(bytes: Uint8Array, ids: number[]) {
  const session = await ort.InferenceSession.create(bytes);
  try {
    const out = await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) });
    return Array.from(out['rows']!.data as Float32Array);
  } finally {
    await session.release();
  }
}
const halved = (value: number) => {
  const view = new DataView(new ArrayBuffer(2));
  setFloat16(view, 0, value);
  return getFloat16(view, 0);
};

describe('halfPrecisionTables', () => {
  it('stores a table only Gather reads as float16, and the model still answers float32 rows, rounded', async () => {
    const original = model(false);
    const { model: converted, tables } = halfPrecisionTables(original, 16);
    expect(tables).toEqual(['table']);
    expect(await run(original, [2, 0])).toEqual([...TABLE.slice(6, 9), ...TABLE.slice(0, 3)].map(Math.fround));
    expect(await run(converted, [2, 0])).toEqual([...TABLE.slice(6, 9), ...TABLE.slice(0, 3)].map(halved));
  });

  it('leaves a table that is also a graph input as it is: a caller may pass float32 rows for it', async () => {
    const listed = model(false, true);
    expect(halfPrecisionTables(listed, 16)).toEqual({ model: listed, tables: [] });
    expect(await run(listed, [0, 3])).toEqual([...TABLE.slice(0, 3), ...TABLE.slice(9, 12)].map(Math.fround));
  });

  it('leaves tables below the size floor, and tables another operator reads, as they are', async () => {
    expect(halfPrecisionTables(model(false), 1024)).toEqual({ model: model(false), tables: [] });
    const shared = model(true);
    const { model: same, tables } = halfPrecisionTables(shared, 16);
    expect(tables).toEqual([]);
    expect(same).toBe(shared);
    expect(await run(same, [1, 3])).toEqual([...TABLE.slice(3, 6), ...TABLE.slice(9, 12)].map(Math.fround));
  });
});
