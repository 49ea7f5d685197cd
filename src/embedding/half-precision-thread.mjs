// @ts-check
/**
 * A throwaway thread that reads a q8 ONNX file and answers it with its int8 weights at seven bits
 * (seven-bit-weights.mjs: every CPU computes the same vectors) and its lookup tables at half
 * precision (half-precision-tables.mjs, `withHalfPrecisionTables`), then ends: the file's bytes
 * (59 MB for all-MiniLM-L6-v2) are freed with it, before onnxruntime reads the answer.
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { halfPrecisionTables } from './half-precision-tables.mjs';
import { sevenBitWeights } from './seven-bit-weights.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const file = readFileSync(/** @type {{ weights: string }} */ (workerData).weights);
sevenBitWeights(file);
const { model } = halfPrecisionTables(file);
// Sent as a whole ArrayBuffer of its own (a model without lookup tables comes back as the file's
// own Buffer), so that transferring it moves exactly these bytes.
const own = model.byteOffset === 0 && model.byteLength === model.buffer.byteLength ? model : model.slice();
port.postMessage(own, [own.buffer]);
