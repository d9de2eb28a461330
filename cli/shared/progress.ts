/** A one-line progress indicator for long jobs on a terminal (redrawn in place on stderr). */
export function progressLine(label: string): (done: number, total: number) => void {
  const started = performance.now();
  let lastPct = -1;
  return (done, total) => {
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
    if (pct === lastPct) return;
    lastPct = pct;
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    process.stderr.write(`\r${label}: ${String(pct).padStart(3)} % (${secs} s)${pct >= 100 ? '\n' : ''}`);
  };
}
