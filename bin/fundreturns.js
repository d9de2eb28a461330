#!/usr/bin/env node
// The CLI runs from the compiled build (npm run build); see README.
import { main } from '../dist/builder/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`fundreturns: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
  },
);
