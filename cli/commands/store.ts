/**
 * `fundreturns store backup DIR` and `fundreturns store restore DIR`: the whole access
 * store (accounts, keys, people, plan requests, plans, monthly and daily counts, burst
 * buckets, audit) copied into a directory while servers run, and put back, for the
 * embedded store and for Redis alike (server/access/backup*.ts).
 */
import { resolve } from 'node:path';
import { type BackupManifest, describeCounts } from '../../accounts/backup.js';
import { backupFileStore, restoreFileStore } from '../../accounts/backup-file.js';
import { isRedisSpec } from '../../accounts/open-store.js';
import { redactUrl } from '../../accounts/redact-url.js';
import type { ParsedArgs } from '../shared/args.js';
import type { Command } from '../shared/command.js';
import { JSON_OUTPUT, switchOption } from '../shared/flags.js';
import type { CliIo } from '../shared/io.js';
import { STORE_OR_REDIS } from '../shared/store-flag.js';
import { parseSubcommand, type SubShape, subcommandForms } from '../shared/subcommand.js';

const FORCE = switchOption('force', {
  help: "restore over a store that holds data (a file store's content is moved aside, a Redis store's deleted)",
});

interface StoreSub extends SubShape {
  run(dir: string, spec: string, args: ParsedArgs, io: CliIo): Promise<number>;
}

const SUBCOMMANDS: Record<string, StoreSub> = {
  backup: { params: ['DIR'], flags: [JSON_OUTPUT], run: backup },
  restore: { params: ['DIR'], flags: [FORCE, JSON_OUTPUT], run: restore },
};

export const store: Command = {
  name: 'store',
  summary: 'back up the whole access store into a directory while servers run, or restore one',
  forms: subcommandForms('store', SUBCOMMANDS, [['backup'], ['restore']], [STORE_OR_REDIS]),
  run: async (argv, io) => {
    const { sub, flags } = parseSubcommand('store', SUBCOMMANDS, [STORE_OR_REDIS], argv, io.env);
    return await sub.run(resolve(flags.positionals[0]), STORE_OR_REDIS.read(flags), flags, io);
  },
};

function kib(manifest: BackupManifest): string {
  const bytes = Object.values(manifest.files).reduce((s, f) => s + f.bytes, 0);
  return `${Object.keys(manifest.files).length} files, ${(bytes / 1024).toFixed(1)} KiB`;
}

/** Where the store is, as messages name it: a Redis URL without its password. */
function storeName(spec: string): string {
  return isRedisSpec(spec) ? redactUrl(spec) : spec;
}

async function backup(dir: string, spec: string, args: ParsedArgs, io: CliIo): Promise<number> {
  const started = performance.now();
  const manifest = isRedisSpec(spec)
    ? await (await import('../../accounts/backup-redis.js')).backupRedisStore(spec, dir)
    : await backupFileStore(spec, dir);
  const took = Math.round(performance.now() - started);
  if (JSON_OUTPUT.read(args)) io.out(JSON.stringify({ dir, ms: took, ...manifest }));
  else
    io.out(
      `backed up the store ${storeName(spec)} to ${dir} in ${took} ms (${kib(manifest)}): ${describeCounts(manifest)}`,
    );
  return 0;
}

async function restore(dir: string, spec: string, args: ParsedArgs, io: CliIo): Promise<number> {
  const started = performance.now();
  const force = FORCE.read(args);
  let manifest: BackupManifest;
  let replaced: string;
  if (isRedisSpec(spec)) {
    const r = await (await import('../../accounts/backup-redis.js')).restoreRedisStore(dir, spec, {
      force,
    });
    manifest = r.manifest;
    replaced = r.replaced === 0 ? '' : `; its ${r.replaced} fr: keys before were deleted`;
  } else {
    const r = await restoreFileStore(dir, spec, { force });
    manifest = r.manifest;
    replaced = r.replaced === null ? '' : `; what it held before is in ${r.replaced}`;
  }
  const took = Math.round(performance.now() - started);
  if (JSON_OUTPUT.read(args)) io.out(JSON.stringify({ dir, ms: took, ...manifest }));
  else
    io.out(
      `restored ${dir} (made ${manifest.made_at} from ${manifest.from}) into the store ${storeName(spec)} in ${took} ms: ` +
        `${describeCounts(manifest)}${replaced}`,
    );
  io.err('fundreturns: sessions and emailed links are not in a backup: people sign in again');
  return 0;
}
