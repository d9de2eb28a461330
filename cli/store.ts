/**
 * `fundreturns store backup DIR` and `fundreturns store restore DIR`: the whole access
 * store (accounts, keys, people, plan requests, plans, monthly and daily counts, burst
 * buckets, audit) copied into a directory while servers run, and put back, for the
 * embedded store and for Redis alike (accounts/backup*.ts).
 */
import { resolve } from 'node:path';
import { type BackupManifest, describeCounts } from '../accounts/backup.js';
import { backupFileStore, restoreFileStore } from '../accounts/backup-file.js';
import { isRedisSpec } from '../accounts/open-store.js';
import { redactUrl } from '../accounts/redact-url.js';
import { boolFlag, type FlagKind, HelpRequested, parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { storeFlag } from './store-flag.js';

const SUBCOMMANDS: Record<string, Record<string, FlagKind>> = {
  backup: { json: 'boolean' },
  restore: { json: 'boolean', force: 'boolean' },
};

/** The flags `fundreturns store SUB` accepts, or null for no such subcommand (usage.test.ts). */
export function storeSubcommandFlags(sub: string): Record<string, FlagKind> | null {
  return Object.hasOwn(SUBCOMMANDS, sub) ? { store: 'string', ...SUBCOMMANDS[sub] } : null;
}

function kib(manifest: BackupManifest): string {
  const bytes = Object.values(manifest.files).reduce((s, f) => s + f.bytes, 0);
  return `${Object.keys(manifest.files).length} files, ${(bytes / 1024).toFixed(1)} KiB`;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h') throw new HelpRequested();
  const flags = sub === undefined ? null : storeSubcommandFlags(sub);
  if (flags === null)
    throw new UsageError(
      sub === undefined
        ? 'store: a subcommand is required (backup, restore)'
        : `store: unknown subcommand ${JSON.stringify(sub)} (expected backup, restore)`,
    );
  const args = parseArgs(rest, flags, io.env);
  if (args.positionals.length === 0) throw new UsageError(`store ${sub}: DIR is required`);
  if (args.positionals.length > 1)
    throw new UsageError(`store ${sub}: unexpected argument ${JSON.stringify(args.positionals[1])}`);
  const dir = resolve(args.positionals[0]);
  const spec = storeFlag(args);
  const redis = isRedisSpec(spec);
  const where = redis ? redactUrl(spec) : spec;
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  if (sub === 'backup') {
    const manifest = redis
      ? await (await import('../accounts/backup-redis.js')).backupRedisStore(spec, dir)
      : await backupFileStore(spec, dir);
    const took = ms();
    if (boolFlag(args, 'json')) io.out(JSON.stringify({ dir, ms: took, ...manifest }));
    else
      io.out(
        `backed up the store ${where} to ${dir} in ${took} ms (${kib(manifest)}): ${describeCounts(manifest)}`,
      );
    return 0;
  }
  const force = boolFlag(args, 'force');
  let manifest: BackupManifest;
  let replaced: string;
  if (redis) {
    const r = await (await import('../accounts/backup-redis.js')).restoreRedisStore(dir, spec, {
      force,
    });
    manifest = r.manifest;
    replaced = r.replaced === 0 ? '' : `; its ${r.replaced} fr: keys before were deleted`;
  } else {
    const r = await restoreFileStore(dir, spec, { force });
    manifest = r.manifest;
    replaced = r.replaced === null ? '' : `; what it held before is in ${r.replaced}`;
  }
  const took = ms();
  if (boolFlag(args, 'json')) io.out(JSON.stringify({ dir, ms: took, ...manifest }));
  else
    io.out(
      `restored ${dir} (made ${manifest.made_at} from ${manifest.from}) into the store ${where} in ${took} ms: ` +
        `${describeCounts(manifest)}${replaced}`,
    );
  io.err('fundreturns: sessions and emailed links are not in a backup: people sign in again');
  return 0;
}
