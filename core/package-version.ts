import { readFileSync } from 'node:fs';

/** The version in package.json, read at run time from the compiled file (dist/core/, two levels down). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
