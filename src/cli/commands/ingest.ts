import type { Command } from 'commander';
import { createReadStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { ingestStream, ndjsonEntries } from '../../services/intake/stream-ingest.ts';
import { openIntake } from '../../start/core.ts';
import { EXIT, out, runCommand } from '../context.ts';

/** `ingest FILE.ndjson [--wait | --wait-vectors]`: the HTTP intake's path, from a file or stdin. */
export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('stream observations (NDJSON) from a file, or - for stdin, through the intake path')
    .argument('<file>', 'an NDJSON file, or - for standard input')
    .option('--wait', 'return only when every accepted observation can be read and searched by its words')
    .option('--wait-vectors', 'as --wait, and also wait for the vectors of their text')
    .option('--timeout <seconds>', 'how long --wait waits', '3600')
    .action((file: string, options: { wait?: boolean; waitVectors?: boolean; timeout: string }) =>
      runCommand(async ({ config, connections, use }) => {
        const { intake } = use(openIntake(config, connections));
        await connections.redisReady();
        const input = file === '-' ? process.stdin : createReadStream(file);
        const lines = createInterface({ input, crlfDelay: Infinity });
        const result = await ingestStream(ndjsonEntries(lines), intake, {
          wait: options.wait === true || options.waitVectors === true,
          // As the HTTP intake's `?wait=true`: the vectors follow, unless asked for.
          ...(options.waitVectors ? {} : { embedLater: true }),
          requestId: `cli_${randomBytes(9).toString('base64url')}`,
          waitTimeoutMs: Number(options.timeout) * 1000,
          onRejected: (r) => process.stderr.write(`${JSON.stringify(r)}\n`),
          onUnavailable: (ms) => process.stderr.write(`the intake queue did not answer; again in ${ms} ms\n`),
        });
        out(JSON.stringify(result));
        return result.rejected > 0 ? EXIT.failed : EXIT.ok;
      }),
    );
}
