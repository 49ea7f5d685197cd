// @ts-check
/**
 * A throwaway thread that reads an ONNX file and answers it with half-precision lookup tables
 * (half-precision-tables.mjs, `withHalfPrecisionTables`), then ends: the file's bytes (59 MB for
 * all-MiniLM-L6-v2) are freed with it, before onnxruntime reads the answer.
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { halfPrecisionTables } from './half-precision-tables.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { model } = halfPrecisionTables(readFileSync(/** @type {{ weights: string }} */ (workerData).weights));
// Sent as a whole ArrayBuffer of its own (a model without lookup tables comes back as the file's
// own Buffer), so that transferring it moves exactly these bytes.
const own = model.byteOffset === 0 && model.byteLength === model.buffer.byteLength ? model : model.slice();
port.postMessage(own, [own.buffer]);
