#!/usr/bin/env node
// The CLI runs from the compiled build (npm run build); see README.

// `serve` holds its stop signals before any module loads (server/early-signal.ts).
if (process.argv[2] === 'serve') (await import('../dist/server/early-signal.js')).holdSignals();
const { main } = await import('../dist/cli/main.js');
const { escapeForTerminal } = await import('../dist/core/escape.js');

// A reader that stops early (`accounts list --json | head`) is not an error of ours:
// what is left to print has nowhere to go, and the command ends as it would have.
process.stdout.on('error', (e) => {
  if (e?.code !== 'EPIPE') throw e;
});
// The same for stderr: `fundreturns serve 2>&1 | head -1` must keep serving, and stop on SIGTERM.
process.stderr.on('error', (e) => {
  if (e?.code !== 'EPIPE') throw e;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`fundreturns: ${escapeForTerminal(String(e?.stack ?? e))}\n`);
    process.exitCode = 1;
  },
);
