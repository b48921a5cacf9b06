import { writeFileSync } from 'node:fs';
import { measureBundle } from './size.js';
const s = await measureBundle();
writeFileSync('/tmp/rtpc/bundle.js', s.code);
console.log(s.gzipBytes, s.minBytes);
