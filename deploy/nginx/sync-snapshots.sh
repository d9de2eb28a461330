#!/bin/sh
# Copy each newly published snapshot from the machine that builds it (the one running
# fundreturns-schedule) to a second server's snapshots directory, CURRENT last
# (docs/monitoring.md, "How the second server gets each snapshot"). Run it after each
# publish, e.g. from a systemd path unit on CURRENT or every minute from cron:
#   sync-snapshots.sh /var/lib/fundreturns/snapshots fundreturns@10.0.0.12:/var/lib/fundreturns/snapshots
# The server there polls its CURRENT (--poll-ms) and swaps once the new id is named:
# every file of the snapshot is in place before that, so it never sees half of one.
set -eu
src=${1:?usage: sync-snapshots.sh SRC_SNAPSHOTS_DIR [HOST:]DEST_SNAPSHOTS_DIR}
dest=${2:?usage: sync-snapshots.sh SRC_SNAPSHOTS_DIR [HOST:]DEST_SNAPSHOTS_DIR}
# 1. Every snapshot directory (and the refresh stats), not CURRENT. Snapshots are never
#    changed once published, so what is there already is skipped.
rsync -a --exclude=/CURRENT --exclude='/.tmp-*' "$src/" "$dest/"
# 2. CURRENT alone; rsync writes it to a temporary name and renames it into place.
rsync -a "$src/CURRENT" "$dest/CURRENT"
# 3. Then drop what the builder pruned, once the server has had time to swap
#    (it keeps what it serves in memory, not on disk).
sleep 5
rsync -a --delete --exclude=/CURRENT --exclude='/.tmp-*' "$src/" "$dest/"
