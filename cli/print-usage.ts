/** `npm run usage`: the command line's usage in Markdown, for docs/cli.md (from cli/usage.ts). */
import { usageMarkdown } from './usage.js';

process.stdout.write(`${usageMarkdown()}\n`);
