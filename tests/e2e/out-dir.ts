import { join } from 'node:path';

/** Where an e2e call keeps its report.json/report.html (gitignored), for looking at a failure. */
export function outDir(name: string): string {
  return join(process.cwd(), 'test-results', name);
}
