/**
 * tools/walkthrough.ts writes README.md's quick start files literally into a
 * fresh Vite app (the browser part runs by hand: it needs the npm registry).
 * Here: the README still has those files, each names the port the
 * walkthrough replaces, and the page imports only the package entry.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quickStartFiles } from '../../../tools/walkthrough.js';

describe('README quick start', () => {
  const files = quickStartFiles(readFileSync(new URL('../../../README.md', import.meta.url), 'utf8'));

  it('has a signalling server and a page, both on the port the walkthrough replaces', () => {
    expect(files.map((f) => f.path)).toEqual(['server.mjs', 'src/main.ts']);
    for (const f of files) expect(f.text).toContain('8080');
    expect(files[0]?.text).toContain("from 'multipath-rtc/server'");
    expect(files[1]?.text).toContain("from 'multipath-rtc'");
    expect(files[1]?.text).toContain('CallEvent.RemoteTrack');
  });

  it('rejects a README without the section', () => {
    expect(() => quickStartFiles('# nothing here')).toThrow(/Quick start/);
  });
});
