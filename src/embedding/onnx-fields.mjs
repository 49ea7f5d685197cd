// @ts-check
/**
 * Reading an ONNX model's protobuf wire format field by field, for the edits the q8 loader makes
 * while it loads (half-precision-tables.mjs, seven-bit-weights.mjs): every field an edit does not
 * touch stays as it is, byte for byte. Field numbers are those of onnx.proto.
 */
import protobuf from 'protobufjs/minimal.js';

const { Reader } = protobuf;

export const LENGTH_DELIMITED = 2;
export const VARINT = 0;
export const MODEL = { graph: 7 };
export const GRAPH = { node: 1, initializer: 5, input: 11, output: 12, valueInfo: 13 };
export const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5 };
export const TENSOR = { dims: 1, dataType: 2, floatData: 4, int32Data: 5, name: 8, rawData: 9, dataLocation: 14 };
export const DATA_TYPE = { float: 1, int8: 3, float16: 10 };
/** Operators that carry subgraphs, whose inputs an edit would not see: a model with any is left alone. */
export const SUBGRAPH_OPS = new Set(['If', 'Loop', 'Scan']);

/**
 * One field of a message: where it lies (tag included), and its payload if length-delimited (a
 * view into the message: writing to it writes to the message), or its value if a varint.
 * @typedef {{ field: number, start: number, end: number, bytes: Uint8Array | null, varint: number | null }} Field
 */

/**
 * The fields of one protobuf message, in order.
 * @param {Uint8Array} message
 * @returns {Field[]}
 */
export function fieldsOf(message) {
  const reader = Reader.create(message);
  /** @type {Field[]} */
  const fields = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    const wireType = tag & 7;
    let bytes = null;
    let varint = null;
    if (wireType === LENGTH_DELIMITED) {
      const length = reader.uint32();
      bytes = message.subarray(reader.pos, reader.pos + length);
      reader.skip(length);
    } else if (wireType === VARINT) {
      varint = Number(reader.int64());
    } else {
      reader.skipType(wireType);
    }
    fields.push({ field: tag >>> 3, start, end: reader.pos, bytes, varint });
  }
  return fields;
}

const decoder = new TextDecoder();
/**
 * The strings of every field `number` of a message.
 * @param {Field[]} fields
 * @param {number} number
 */
export const stringsOf = (fields, number) =>
  fields.filter((f) => f.field === number && f.bytes).map((f) => decoder.decode(/** @type {Uint8Array} */ (f.bytes)));

/**
 * The value of the first varint field `number` of a message, or null.
 * @param {Field[]} fields
 * @param {number} number
 */
export const varintOf = (fields, number) => fields.find((f) => f.field === number)?.varint ?? null;

/**
 * A model's graph: its fields, its nodes' fields and its initializers' fields (both by their
 * index among the graph's fields). Null when the model has no graph.
 * @param {Uint8Array} model an ONNX ModelProto
 */
export function graphOf(model) {
  const modelFields = fieldsOf(model);
  const graphField = modelFields.find((f) => f.field === MODEL.graph);
  if (!graphField?.bytes) return null;
  const fields = fieldsOf(graphField.bytes);
  /** @type {Field[][]} */
  const nodes = [];
  /** @type {Map<number, Field[]>} */
  const initializers = new Map();
  fields.forEach((f, index) => {
    if (f.field === GRAPH.node) nodes[index] = fieldsOf(/** @type {Uint8Array} */ (f.bytes));
    if (f.field === GRAPH.initializer) initializers.set(index, fieldsOf(/** @type {Uint8Array} */ (f.bytes)));
  });
  return { modelFields, graphField, graphBytes: graphField.bytes, fields, nodes, initializers };
}
