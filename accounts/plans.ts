/**
 * Plan limits (C26): the defaults, overridden per plan by `--plans FILE`, a JSON
 * object such as {"free": {"burst": 100, "monthly": 250}}. Read once at start.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_PLANS, PLAN_NAMES, type PlanLimits, type PlanName } from './model.js';

export function loadPlans(file: string | null): Record<PlanName, PlanLimits> {
  if (file === null) return { ...DEFAULT_PLANS };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`plans file ${file}: ${(e as Error).message}`);
  }
  return parsePlans(json, `plans file ${file}`);
}

/**
 * Plans from their JSON form (a plans file, or what a server recorded in its store),
 * over the defaults. Throws, naming `source`, on anything but known plans with
 * positive whole limits.
 */
export function parsePlans(json: unknown, source: string): Record<PlanName, PlanLimits> {
  const plans: Record<PlanName, PlanLimits> = { ...DEFAULT_PLANS };
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error(`${source}: not a JSON object`);
  for (const [name, value] of Object.entries(json)) {
    if (!(PLAN_NAMES as readonly string[]).includes(name)) {
      throw new Error(`${source}: unknown plan ${JSON.stringify(name)} (plans are ${PLAN_NAMES.join(', ')})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(`${source}: ${name} must be an object such as {"burst": 100, "monthly": 250}`);
    // A misspelt limit ("bursts") would leave the default in force while the operator believes otherwise.
    for (const k of Object.keys(value)) {
      if (k !== 'burst' && k !== 'monthly')
        throw new Error(`${source}: ${name}.${k} is not a limit (limits are burst, monthly)`);
    }
    const v = value as Partial<PlanLimits>;
    for (const k of ['burst', 'monthly'] as const) {
      if (v?.[k] !== undefined && !(Number.isSafeInteger(v[k]) && (v[k] as number) > 0)) {
        throw new Error(`${source}: ${name}.${k} must be a positive whole number`);
      }
    }
    plans[name as PlanName] = { ...plans[name as PlanName], ...v };
  }
  return plans;
}
