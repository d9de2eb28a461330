/**
 * What a command talks through: its two output streams, its environment and whether a
 * person is watching (progress lines). Tests pass their own to read what was said.
 */
type Out = (s: string) => void;

export interface CliIo {
  out: Out;
  err: Out;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
}

export const processIo: CliIo = {
  out: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
  env: process.env,
  isTty: Boolean(process.stderr.isTTY),
};
