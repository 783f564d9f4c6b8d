/**
 * Corridors' pure rules: whether a corridor can serve a payee (its policy against the field
 * contract and the payee's values), and the limits an order is checked against (orders/rules.ts).
 * No database: callers pass what these need.
 */
import { jurisdictionsOf, routingTypeOf, type FieldSpec } from './contracts.js';

export interface CorridorPolicy {
  enabled: boolean;
  restrictedJurisdictions: readonly string[];
  confirmableRoutingTypes: readonly string[];
}

/** Why a corridor cannot serve (each is `corridor_not_supported`). */
export type CorridorRefusal =
  'not_enabled' | 'entity_type_not_served' | 'restricted_jurisdiction' | 'no_confirmable_routing_type';

/** The routing-code types a contract can carry: its type fields' values, and `bic` when it has a BIC field. */
export function contractRoutingTypes(contract: readonly FieldSpec[]): string[] {
  const types = new Set<string>();
  for (const spec of contract) {
    if (spec.type === 'routing_code' && spec.type_field) {
      for (const v of contract.find((s) => s.key === spec.type_field)?.enum ?? []) types.add(v);
    }
    if (spec.type === 'bic') types.add('bic');
  }
  return [...types];
}

/** Before reading any field: the corridor is enabled and can confirm at least one of the contract's routing types. */
export function corridorRefusal(
  policy: CorridorPolicy,
  contract: readonly FieldSpec[] | undefined,
): CorridorRefusal | undefined {
  if (!policy.enabled) return 'not_enabled';
  if (!contract) return 'entity_type_not_served';
  const types = contractRoutingTypes(contract);
  if (types.length > 0 && !types.some((t) => policy.confirmableRoutingTypes.includes(t)))
    return 'no_confirmable_routing_type';
  return undefined;
}

/** With the payee's values read: no restricted jurisdiction, and the routing type it uses can be confirmed. */
export function payeeRefusal(
  policy: CorridorPolicy,
  contract: readonly FieldSpec[],
  values: Record<string, string>,
  corridorCountry: string,
): CorridorRefusal | undefined {
  const places = [corridorCountry, ...jurisdictionsOf(contract, values)];
  if (places.some((c) => policy.restrictedJurisdictions.includes(c))) return 'restricted_jurisdiction';
  const type = routingTypeOf(contract, values);
  if (type !== undefined && !policy.confirmableRoutingTypes.includes(type)) return 'no_confirmable_routing_type';
  return undefined;
}

/** A corridor's limits (payout currency, minor units; null = none). */
export interface CorridorLimits {
  payoutMin: bigint;
  memberSingleMax: bigint | null;
  memberDailyMax: bigint | null;
  merchantSingleMax: bigint | null;
  merchantDailyMax: bigint | null;
}
