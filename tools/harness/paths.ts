/** Repository locations for the Node tools. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file is tools/harness/paths.ts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
