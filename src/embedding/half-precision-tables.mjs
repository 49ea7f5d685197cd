// @ts-check
/**
 * Half-precision lookup tables for a quantized ONNX model, made in memory while it loads (plain
 * JavaScript for the model thread, like embedding-thread.mjs).
 *
 * Why: dynamic int8 quantization (the `model_quantized.onnx` exports) quantizes the MatMul weights
 * only; a BERT model's word-embedding table stays float32 and is most of what stays resident
 * (all-MiniLM-L6-v2: 30,522 × 384 floats, 44.7 MiB of the 55.8 MiB of weights). A table that only
 * Gather reads is a lookup: each text reads a few hundred of its rows, and half precision (11
 * significant bits) keeps every value within 2^-11 of itself. The table is stored as float16 and a
 * Cast after the Gather gives the model the float32 rows it expects, so each process with the model
 * holds ~22 MiB less (bench/embeddings.md, "The word-embedding table at half precision"). The q8
 * activations carry more noise than this: over 500 SciFact abstracts the vectors stay at cosine
 * ≥ 0.9937 (mean 0.9970) of the untouched q8 file's, and their mean cosine to the float32 model's
 * is unchanged (0.9953).
 *
 * The edit works on the protobuf wire format, field by field, so every field it does not touch
 * (metadata, opsets, other tensors, fields of later ONNX versions) is copied byte for byte.
 * Field numbers are those of onnx.proto.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import protobuf from 'protobufjs/minimal.js';
import {
  DATA_TYPE,
  fieldsOf,
  GRAPH,
  LENGTH_DELIMITED,
  MODEL,
  NODE,
  stringsOf,
  SUBGRAPH_OPS,
  TENSOR,
  VARINT,
  varintOf,
} from './onnx-fields.mjs';

const { Writer } = protobuf;

/** @typedef {import('./onnx-fields.mjs').Field} Field */

/** Tables smaller than this stay float32: what they would save is not worth their rounding. */
const MIN_TABLE_BYTES = 4 * 1024 * 1024;

const ATTRIBUTE = { name: 1, i: 3, type: 20 };
const ATTRIBUTE_TYPE_INT = 2;

/**
 * A piece of the output: bytes, or a length and how to write it (the float16 table, written
 * straight into the output instead of into a buffer of its own).
 * @typedef {Uint8Array | { length: number, write: (target: Uint8Array, offset: number) => void }} Part
 */

/** @param {Part[]} parts */
const lengthOf = (parts) =>
  parts.reduce((sum, part) => sum + (part instanceof Uint8Array ? part.byteLength : part.length), 0);

/**
 * A length-delimited field of `parts`.
 * @param {number} number
 * @param {Part[]} parts
 * @returns {Part[]}
 */
function delimited(number, parts) {
  return [
    Writer.create()
      .uint32((number << 3) | LENGTH_DELIMITED)
      .uint32(lengthOf(parts))
      .finish(),
    ...parts,
  ];
}

/**
 * The parts of a message made of `fields` of `message`, in their order, with some replaced:
 * `replace` returns the parts of a field (tag included), or undefined to keep it as it is.
 * @param {Uint8Array} message
 * @param {Field[]} fields
 * @param {(field: Field, index: number) => Part[] | undefined} replace
 * @returns {Part[]}
 */
function rewrite(message, fields, replace) {
  return fields.flatMap((f, index) => replace(f, index) ?? [message.subarray(f.start, f.end)]);
}

/**
 * One buffer of all the parts: the only allocation of the output's size.
 * @param {Part[]} parts
 */
function assemble(parts) {
  const output = new Uint8Array(lengthOf(parts));
  let offset = 0;
  for (const part of parts) {
    if (part instanceof Uint8Array) output.set(part, offset);
    else part.write(output, offset);
    offset += part instanceof Uint8Array ? part.byteLength : part.length;
  }
  return output;
}

/**
 * The float16 bits of a float32 given as its bits, rounded to nearest, ties to even: the
 * conversion of F. Giesen's `float_to_half_fast3_rtne`, with the subnormal range computed exactly
 * in doubles. Exported for its test, which checks it against @petamoriken/float16 bit for bit.
 * @param {number} bits a float32's bits, as an unsigned 32-bit integer
 */
export function float16Bits(bits) {
  const sign = (bits >>> 16) & 0x8000;
  const magnitude = bits & 0x7fffffff;
  // 2^16 and above (and infinities, NaNs): infinity, or a quiet NaN.
  if (magnitude >= 0x47800000) return sign | (magnitude > 0x7f800000 ? 0x7e00 : 0x7c00);
  // Below 2^-14, float16 is subnormal: its mantissa counts units of 2^-24. The scaled value is
  // exact in a double, so rounding it here rounds once.
  if (magnitude < 0x38800000) {
    scratch.setUint32(0, magnitude);
    const units = scratch.getFloat32(0) * 2 ** 24;
    let whole = Math.floor(units);
    const rest = units - whole;
    if (rest > 0.5 || (rest === 0.5 && whole % 2 === 1)) whole += 1;
    return sign | whole;
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to even.
  const odd = (magnitude >>> 13) & 1;
  return sign | ((magnitude - 0x38000000 + 0xfff + odd) >>> 13);
}
const scratch = new DataView(new ArrayBuffer(4));

/**
 * A raw_data payload of float32 values (little-endian, as ONNX stores them) as a field of float16 values.
 * @param {Uint8Array} raw
 * @returns {Part[]}
 */
function float16Field(raw) {
  const source = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const count = raw.byteLength / 4;
  /** @type {Part} */
  const values = {
    length: count * 2,
    write(target, offset) {
      const view = new DataView(target.buffer, target.byteOffset + offset, count * 2);
      for (let i = 0; i < count; i++) view.setUint16(i * 2, float16Bits(source.getUint32(i * 4, true)), true);
    },
  };
  return delimited(TENSOR.rawData, [values]);
}

/**
 * A Cast node from `input` to float32 `output`.
 * @param {string} name
 * @param {string} input
 * @param {string} output
 */
function castToFloat(name, input, output) {
  const writer = Writer.create();
  writer.uint32((NODE.input << 3) | LENGTH_DELIMITED).string(input);
  writer.uint32((NODE.output << 3) | LENGTH_DELIMITED).string(output);
  writer.uint32((NODE.name << 3) | LENGTH_DELIMITED).string(name);
  writer.uint32((NODE.opType << 3) | LENGTH_DELIMITED).string('Cast');
  writer.uint32((NODE.attribute << 3) | LENGTH_DELIMITED).fork();
  writer.uint32((ATTRIBUTE.name << 3) | LENGTH_DELIMITED).string('to');
  writer.uint32((ATTRIBUTE.i << 3) | VARINT).int64(DATA_TYPE.float);
  writer.uint32((ATTRIBUTE.type << 3) | VARINT).int32(ATTRIBUTE_TYPE_INT);
  writer.ldelim();
  return delimited(GRAPH.node, [writer.finish()]);
}

/**
 * The names of the float32 initializers (stored in raw_data, at least `minBytes`) that nothing
 * reads but Gather, as its data input. A table that is also a graph input (which a caller may
 * override, as IR < 4 models list every initializer), a graph output or a declared value keeps
 * its type: those declarations say float32.
 * @param {{ fields: Field[], nodes: Field[][], initializers: Map<number, Field[]> }} graph
 * @param {number} minBytes
 */
function lookupTables(graph, minBytes) {
  /** @type {Set<string>} names used other than as a Gather's data input */
  const otherUses = new Set();
  for (const node of graph.nodes) {
    const gather = stringsOf(node, NODE.opType)[0] === 'Gather';
    stringsOf(node, NODE.input).forEach((name, position) =>
      gather && position === 0 ? undefined : otherUses.add(name),
    );
  }
  const declared = graph.fields.filter(
    (f) => f.field === GRAPH.input || f.field === GRAPH.output || f.field === GRAPH.valueInfo,
  );
  for (const value of declared)
    stringsOf(fieldsOf(/** @type {Uint8Array} */ (value.bytes)), 1).forEach((name) => otherUses.add(name));
  /** @type {Set<string>} */
  const names = new Set();
  for (const tensor of graph.initializers.values()) {
    const name = stringsOf(tensor, TENSOR.name)[0];
    const raw = tensor.find((f) => f.field === TENSOR.rawData)?.bytes;
    const external = (varintOf(tensor, TENSOR.dataLocation) ?? 0) !== 0;
    if (name === undefined || !raw || external || varintOf(tensor, TENSOR.dataType) !== DATA_TYPE.float) continue;
    if (raw.byteLength >= minBytes && !otherUses.has(name)) names.add(name);
  }
  return names;
}

/**
 * The model with each large float32 table that only Gather reads stored as float16, a Cast back to
 * float32 after each of its Gathers; the same bytes if it has none (or carries subgraphs).
 * @param {Uint8Array} model an ONNX ModelProto
 * @param {number} [minBytes] the smallest table to convert
 * @returns {{ model: Uint8Array, tables: string[] }} the model to load, and the tables converted
 */
export function halfPrecisionTables(model, minBytes = MIN_TABLE_BYTES) {
  const modelFields = fieldsOf(model);
  const graphField = modelFields.find((f) => f.field === MODEL.graph);
  if (!graphField?.bytes) return { model, tables: [] };
  const graphBytes = graphField.bytes;
  const fields = fieldsOf(graphBytes);
  /** @type {Field[][]} */
  const nodes = [];
  /** @type {Map<number, Field[]>} */
  const initializers = new Map();
  fields.forEach((f, index) => {
    if (f.field === GRAPH.node) nodes[index] = fieldsOf(/** @type {Uint8Array} */ (f.bytes));
    if (f.field === GRAPH.initializer) initializers.set(index, fieldsOf(/** @type {Uint8Array} */ (f.bytes)));
  });
  const nodeList = nodes.filter(Boolean);
  if (nodeList.some((node) => SUBGRAPH_OPS.has(stringsOf(node, NODE.opType)[0] ?? ''))) return { model, tables: [] };
  const tables = lookupTables({ fields, nodes: nodeList, initializers }, minBytes);
  if (tables.size === 0) return { model, tables: [] };

  const graph = rewrite(graphBytes, fields, (f, index) => {
    const tensor = initializers.get(index);
    if (tensor && tables.has(stringsOf(tensor, TENSOR.name)[0] ?? '')) {
      const bytes = /** @type {Uint8Array} */ (f.bytes);
      const half = rewrite(bytes, tensor, (t) => {
        if (t.field === TENSOR.dataType)
          return [
            Writer.create()
              .uint32((TENSOR.dataType << 3) | VARINT)
              .int32(DATA_TYPE.float16)
              .finish(),
          ];
        if (t.field === TENSOR.rawData) return float16Field(/** @type {Uint8Array} */ (t.bytes));
        return undefined;
      });
      return delimited(GRAPH.initializer, half);
    }
    const node = nodes[index];
    if (!node || stringsOf(node, NODE.opType)[0] !== 'Gather' || !tables.has(stringsOf(node, NODE.input)[0] ?? ''))
      return undefined;
    const output = /** @type {string} */ (stringsOf(node, NODE.output)[0]);
    const halfOutput = `${output}/float16`;
    const firstOutput = node.findIndex((n) => n.field === NODE.output);
    const gather = rewrite(/** @type {Uint8Array} */ (f.bytes), node, (n, i) =>
      i === firstOutput
        ? [
            Writer.create()
              .uint32((NODE.output << 3) | LENGTH_DELIMITED)
              .string(halfOutput)
              .finish(),
          ]
        : undefined,
    );
    return [
      ...delimited(GRAPH.node, gather),
      ...castToFloat(`${stringsOf(node, NODE.name)[0] ?? output}/to_float32`, halfOutput, output),
    ];
  });
  const parts = rewrite(model, modelFields, (f) => (f === graphField ? delimited(MODEL.graph, graph) : undefined));
  return { model: assemble(parts), tables: [...tables] };
}

/**
 * Runs `use` with the bytes of the ONNX file `weights`, its lookup tables at half precision, and
 * frees them as soon as `use` is done. The file is read and converted in a throwaway thread, which
 * has ended (and freed the file and every intermediate) before `use` starts. Nothing is left for a
 * garbage collection to find: a model thread allocates little once loaded and may not run a full
 * one for hours (measured: converted in the model thread itself, 333 MiB stayed resident after
 * loading, 153 after a forced collection).
 * @template T
 * @param {string} weights
 * @param {(model: Uint8Array) => Promise<T>} use must not keep the bytes: they are detached after it
 * @returns {Promise<T>}
 */
export async function withHalfPrecisionTables(weights, use) {
  const model = await new Promise((resolve, reject) => {
    /** @type {Uint8Array | undefined} */
    let answer;
    const thread = new Worker(new URL('./half-precision-thread.mjs', import.meta.url), { workerData: { weights } });
    thread.once('message', (bytes) => (answer = bytes));
    thread.once('error', reject);
    thread.once('exit', (code) =>
      answer ? resolve(answer) : reject(new Error(`the model conversion thread exited with code ${code}`)),
    );
  });
  try {
    return await use(model);
  } finally {
    discard(model);
  }
}

/**
 * Frees bytes now instead of at a later garbage collection: their buffer is transferred into a
 * message channel that is closed with the message unread. (In the measurements a collection
 * happened to run during the load anyway; this keeps the release from depending on one.)
 * @param {Uint8Array} bytes the whole of their ArrayBuffer
 */
function discard(bytes) {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [bytes.buffer]);
  port1.close();
  port2.close();
}
