import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type AccessState, EMPTY_STATE } from '../../accounts/model.js';
import { TableKeeper } from './startup.js';
import { buildKeyTable, type KeyTableData, SlotMap } from './table.js';

const log = pino({ level: 'silent' });

/** A keeper over a store whose state the test sets, with every table it sends. */
function keeperOver(first: AccessState) {
  let state = first;
  const rebuild = (s: AccessState) => buildKeyTable(s, new SlotMap(8));
  const keeper = new TableKeeper(rebuild(first), rebuild, async () => state, {
    redisUrl: null,
    spec: 'test',
    log,
  });
  const sent: KeyTableData[] = [];
  keeper.onTable((t) => sent.push(t));
  return {
    keeper,
    sent,
    set: (s: AccessState) => {
      state = s;
    },
  };
}

describe('the key table the threads read', () => {
  it('is not sent again while the store has not changed (the poll reads it every second)', async () => {
    const k = keeperOver({ ...EMPTY_STATE, version: 3 });
    await k.keeper.refresh();
    await k.keeper.refresh();
    expect(k.sent).toEqual([]);
  });

  it('is rebuilt and sent once the store moves to a new version', async () => {
    const k = keeperOver({ ...EMPTY_STATE, version: 3 });
    k.set({ ...EMPTY_STATE, version: 4 });
    await k.keeper.refresh();
    await k.keeper.refresh();
    expect(k.sent.map((t) => t.version)).toEqual([4]);
    expect(k.keeper.table.version).toBe(4);
  });

  it('keeps the last table when the store goes back to an older version', async () => {
    const k = keeperOver({ ...EMPTY_STATE, version: 3 });
    k.set({ ...EMPTY_STATE, version: 2 });
    await k.keeper.refresh();
    expect(k.sent).toEqual([]);
    expect(k.keeper.table.version).toBe(3);
  });
});
