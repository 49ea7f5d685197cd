import { Command } from 'commander';
import { registerIndices } from './commands/indices.ts';
import { registerIngest } from './commands/ingest.ts';
import { registerIntake } from './commands/intake.ts';
import { registerHolders, registerKeys } from './commands/keys.ts';
import { registerQuickstart } from './commands/quickstart.ts';
import { registerSeed } from './commands/seed.ts';
import { registerServe } from './commands/serve.ts';

/** The `social-search` executable (operations contract §1). */
const program = new Command('social-search')
  .description('Social Content Search Service: API, worker, intake, keys and index operations.')
  .showHelpAfterError()
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : 2);
  });

registerServe(program);
registerIngest(program);
registerIntake(program);
registerKeys(program);
registerHolders(program);
registerIndices(program);
registerSeed(program);
registerQuickstart(program);

await program.parseAsync(process.argv);
