#!/usr/bin/env bash
# After a test run: fail, naming them, when processes that the run started are still
# running, and end them so that they do not hold ports, locks or stores. The run's
# processes are known by the FUNDRETURNS_TEST_RUN=<id> every child inherits.
set -uo pipefail
id=${1:?usage: test/leftovers.sh RUN_ID}
left=()
for environ in /proc/[0-9]*/environ; do
  pid=${environ#/proc/}
  pid=${pid%/environ}
  [ "$pid" = "$$" ] && continue
  if tr '\0' '\n' 2>/dev/null <"$environ" | grep -qxF "FUNDRETURNS_TEST_RUN=$id"; then
    left+=("$pid")
  fi
done
[ ${#left[@]} -eq 0 ] && { echo "test/leftovers.sh: no process of test run $id is left running"; exit 0; }
echo "test/leftovers.sh: ${#left[@]} process(es) of test run $id still running after the tests:" >&2
for pid in "${left[@]}"; do
  echo "  $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)" >&2
done
kill -KILL "${left[@]}" 2>/dev/null
exit 1
