/** `npm run docs:cli`: write docs/cli.md's generated blocks from the command declarations (cli/usage.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withGeneratedBlocks } from './usage.js';

const path = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
const before = readFileSync(path, 'utf8');
const after = withGeneratedBlocks(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(`${after === before ? 'unchanged' : 'wrote'} ${path}\n`);
