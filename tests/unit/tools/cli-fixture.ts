// A tiny CLI for tests/unit/tools/cli.test.ts: `--mode ok|usage|crash|number`.
import { intOption, runCli, UsageError } from '../../../tools/cli.js';

runCli({ mode: { type: 'string', default: 'ok' }, n: { type: 'string', default: '1' } }, 'usage: cli-fixture --mode ok|usage|crash', 'cli-fixture', async (v) => {
  if (v.mode === 'usage') throw new UsageError('--mode usage: bad on purpose');
  if (v.mode === 'crash') throw new Error('boom');
  process.stdout.write(`n=${intOption('n', v.n, 0, 9)}\n`);
  return 3;
});
