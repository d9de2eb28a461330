/**
 * The provider's fund list against the snapshot's: new funds enter with their
 * history, funds gone from the list or marked inactive turn inactive (keeping their
 * history), name/exchange/ISIN changes apply. A list that lost more than the coverage
 * bound of the live funds is a broken download, not a market event: refused.
 */
import { compareCodes } from '../../core/codes.js';
import type { Day } from '../../core/dates.js';
import { fundRecordAt } from '../../core/snapshot/columns.js';
import type { LoadedSnapshot } from '../../core/snapshot/reader.js';
import type { FundRecord } from '../../core/types.js';
import type { NewFund } from '../append.js';
import type { BuildReport } from '../report/build-report.js';
import { parseFundsFile } from '../source/funds.js';
import { parsePriceFile } from '../source/prices.js';
import { RefreshError, type RefreshGates } from './gates.js';
import type { Provider } from './provider.js';

export interface UniverseUpdate {
  newFunds: NewFund[];
  /** The raw history of each new fund, kept in the source as prices/<code>.csv. */
  histories: Map<string, Uint8Array>;
  updates: Map<string, FundRecord>;
  /** Whether the list said anything (else funds.csv is left as it is). */
  listed: boolean;
}

type Funds = LoadedSnapshot['columns']['funds'];

/** The fund list's changes to the snapshot's funds, with their history for the new ones. */
export async function universeChanges(
  provider: Provider,
  base: LoadedSnapshot,
  lastDay: Day,
  latest: Day,
  gates: RefreshGates,
  report: BuildReport,
): Promise<UniverseUpdate> {
  const bytes = await provider.fundList(lastDay);
  if (bytes === null) return { newFunds: [], histories: new Map(), updates: new Map(), listed: false };
  const parsed = parseFundsFile(bytes, 'funds.csv');
  if (parsed.problems.some((p) => p.reason === 'missing_header_column'))
    throw new RefreshError(`${provider.name}: the fund list cannot be read (no Code or Type column)`, report);
  const pf = base.columns.funds;
  const { updates, inactive, changed } = listChanges(provider.name, pf, parsed.funds, lastDay, gates, report);
  const { newFunds, histories } = await newFundHistories(provider, pf, parsed.funds, lastDay, latest, report);
  report.universe = { newFunds: newFunds.map((f) => f.record.code), inactive, changed };
  return { newFunds, histories, updates, listed: true };
}

/** Each snapshot fund against its line in the list: delisted, turned inactive, renamed; refused when too few are listed. */
function listChanges(
  providerName: string,
  pf: Funds,
  funds: readonly FundRecord[],
  lastDay: Day,
  gates: RefreshGates,
  report: BuildReport,
): { updates: Map<string, FundRecord>; inactive: string[]; changed: string[] } {
  const listed = new Map(funds.map((f) => [f.code, f]));
  let live = 0;
  let liveListed = 0;
  const updates = new Map<string, FundRecord>();
  const inactive: string[] = [];
  const changed: string[] = [];
  for (let i = 0; i < pf.length; i++) {
    const old = fundRecordAt(pf, i);
    const now = listed.get(old.code);
    if (!old.isInactive) {
      live++;
      if (now !== undefined) liveListed++;
    }
    if (now === undefined) {
      // Gone from the list: delisted. It keeps its history; it stops being current.
      if (!old.isInactive) {
        updates.set(old.code, { ...old, isInactive: true, inactiveDate: lastDay });
        inactive.push(old.code);
      }
      continue;
    }
    const next: FundRecord = {
      ...old,
      name: now.name ?? old.name,
      exchange: now.exchange ?? old.exchange,
      isin: now.isin ?? old.isin,
      country: now.country ?? old.country,
      currency: now.currency ?? old.currency,
      isInactive: old.isInactive || now.isInactive,
      inactiveDate: old.isInactive ? old.inactiveDate : now.isInactive ? (now.inactiveDate ?? lastDay) : null,
    };
    if (next.isInactive && !old.isInactive) inactive.push(old.code);
    else if (next.name !== old.name || next.exchange !== old.exchange || next.isin !== old.isin)
      changed.push(old.code);
    if (!sameRecord(old, next)) updates.set(old.code, next);
  }
  if (live > 0 && liveListed < gates.minCoverage * live)
    throw new RefreshError(
      `the ${providerName} fund list names ${liveListed} of the ${live} live funds: refusing to mark the rest inactive ` +
        '(a truncated list? --min-coverage loosens this)',
      report,
      true,
    );
  return { updates, inactive, changed };
}

/** The funds new in the list, in code order, each with its history from the provider (a fund without one stays out). */
async function newFundHistories(
  provider: Provider,
  pf: Funds,
  funds: readonly FundRecord[],
  lastDay: Day,
  latest: Day,
  report: BuildReport,
): Promise<{ newFunds: NewFund[]; histories: Map<string, Uint8Array> }> {
  const known = new Set(pf.code);
  const newFunds: NewFund[] = [];
  const histories = new Map<string, Uint8Array>();
  const fresh = funds.filter((f) => !known.has(f.code)).sort((a, b) => compareCodes(a.code, b.code));
  for (const record of fresh) {
    const history = await provider.history(record.code, lastDay);
    const file = `prices/${record.code}.csv`;
    if (history === null) {
      report.add({ reason: 'fund_without_prices', file: 'funds.csv', line: 0, code: record.code });
      continue;
    }
    const p = parsePriceFile(history, file, record.code, latest);
    report.dataRows += p.dataRows;
    for (const x of p.problems) report.add(x);
    if (p.dates.length === 0) {
      report.add({ reason: 'fund_without_valid_rows', file, line: 0, code: record.code });
      continue;
    }
    newFunds.push({ record, dates: p.dates, values: p.values, lastClose: p.lastClose });
    histories.set(record.code, history);
  }
  return { newFunds, histories };
}

function sameRecord(a: FundRecord, b: FundRecord): boolean {
  return (
    a.name === b.name &&
    a.country === b.country &&
    a.exchange === b.exchange &&
    a.currency === b.currency &&
    a.isin === b.isin &&
    a.isInactive === b.isInactive &&
    a.inactiveDate === b.inactiveDate
  );
}
