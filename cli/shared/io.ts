/**
 * What a command talks through: its two output streams, its environment and whether a
 * person is watching (progress lines). Tests pass their own to read what was said.
 */
import { escapeForTerminal } from '../../core/escape.js';

type Out = (s: string) => void;

export interface CliIo {
  out: Out;
  err: Out;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
}

export const processIo: CliIo = {
  out: (s) => process.stdout.write(`${s}\n`),
  // Errors and reports quote input (rows, file names, CURRENT, flags): shown, never obeyed by the terminal.
  err: (s) => process.stderr.write(`${escapeForTerminal(s)}\n`),
  env: process.env,
  isTty: Boolean(process.stderr.isTTY),
};
