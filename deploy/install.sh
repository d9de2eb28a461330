#!/bin/sh
# Install the built app under PREFIX and a `fundreturns` launcher in BINDIR: what
# `make install` runs after the build (docs/operating.md, "Installing on a server").
#   PREFIX   the app's own directory (default /opt/fundreturns): dist/, bin/, the package
#            files and the production node_modules (`npm ci --omit=dev`)
#   BINDIR   where the launcher goes (default /usr/local/bin, on systemd's PATH too):
#            a symbolic link to PREFIX/bin/fundreturns.js
#   DESTDIR  an optional root the whole tree is staged under (packaging, tests); the
#            launcher's link is relative, so it works there and once copied to /
# The new tree is assembled beside PREFIX and checked (`fundreturns --help` runs from it)
# before it replaces PREFIX; the previous install stays in PREFIX.previous for a roll
# back (move it back). A PREFIX that is not a fundreturns install is never replaced.
set -eu
umask 022

prefix=${PREFIX:-/opt/fundreturns}
bindir=${BINDIR:-/usr/local/bin}
destdir=${DESTDIR:-}

case $prefix in /*) ;; *) echo "install: PREFIX must be an absolute path, not $prefix" >&2; exit 2 ;; esac
case $bindir in /*) ;; *) echo "install: BINDIR must be an absolute path, not $bindir" >&2; exit 2 ;; esac
case $prefix in
  /|/usr|/usr/local|/opt|/bin|/etc|/var|/home)
    echo "install: PREFIX=$prefix is a system directory; give fundreturns one of its own (/opt/fundreturns)" >&2
    exit 2 ;;
esac
if [ ! -f dist/cli/main.js ] || [ ! -f bin/fundreturns.js ]; then
  echo 'install: no build here (dist/cli/main.js): run it from the checkout after `make build`' >&2
  exit 1
fi

target=$destdir$prefix
if [ -e "$target" ] && ! grep -qs '"name": "fundreturns"' "$target/package.json"; then
  echo "install: $target exists and is not a fundreturns install: refusing to replace it" >&2
  exit 1
fi

stage=$target.new
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
cp -R dist bin package.json package-lock.json "$stage/"
rm -f "$stage/dist/.built"
# The lock's production tree only; install scripts are not run (none is needed: the
# native modules ship their binaries in the package).
(cd "$stage" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error)
# The build's commit, for fundreturns_build_info: an install has no .git to ask. Read
# as root from a checkout someone else owns (sudo make install), which git refuses
# unless told the directory is safe: only this one read is.
commit=$(git -c safe.directory='*' rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$commit" ]; then printf '%s\n' "$commit" > "$stage/COMMIT"; fi
# Never swap in a tree that does not start.
if ! node "$stage/bin/fundreturns.js" --help > /dev/null; then
  echo "install: the new tree in $stage does not start; $target is unchanged" >&2
  exit 1
fi

if [ -e "$target" ]; then
  rm -rf "$target.previous"
  mv "$target" "$target.previous"
fi
mv "$stage" "$target"
trap - EXIT

mkdir -p "$destdir$bindir"
ln -sfnr "$target/bin/fundreturns.js" "$destdir$bindir/fundreturns"

version=$(node -p 'require(process.argv[1]).version' "$target/package.json")
echo "installed fundreturns $version${commit:+ ($commit)} in $target; launcher $destdir$bindir/fundreturns"
if [ -e "$target.previous" ]; then echo "the previous install is kept in $target.previous"; fi
