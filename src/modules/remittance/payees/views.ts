/** What callers see of payees (pure). */
import { primaryIdentifierParts, type FieldSpec } from '../corridors/contracts.js';
import type { PayeeIds } from './payee-ids.js';
import type { PayeeEntityRow, PayeeRow } from './tables.js';
import { isoOrNull } from '../../../platform/dates.js';

/** Masks an account number, IBAN or proxy: the last four characters shown (an IBAN keeps its country). */
export function maskIdentifier(value: string, part: string): string {
  const tail = value.slice(-4);
  const head = part === 'iban' ? value.slice(0, 2) : '';
  const hidden = Math.max(0, value.length - tail.length - head.length);
  return `${head}${'*'.repeat(Math.min(hidden, 12))}${tail}`;
}

/** The entity's account mask: its first primary identifier part, masked. */
export function accountMaskOf(contract: readonly FieldSpec[], values: Record<string, string>): string {
  for (const spec of contract) {
    if (
      spec.account_identifier &&
      primaryIdentifierParts.includes(spec.account_identifier) &&
      values[spec.key] !== undefined
    ) {
      return maskIdentifier(values[spec.key]!, spec.account_identifier);
    }
  }
  return '';
}

/** The payee's fields as stored (normalised), account numbers, IBANs and proxies masked. */
function maskedFields(contract: readonly FieldSpec[], values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    const spec = contract.find((s) => s.key === key);
    const part = spec?.account_identifier;
    out[key] = part && primaryIdentifierParts.includes(part) ? maskIdentifier(value, part) : value;
  }
  return out;
}

/** The full payee record (list and get). */
export function payeeView(ids: PayeeIds, link: PayeeRow, entity: PayeeEntityRow, contract: readonly FieldSpec[]) {
  return {
    id: ids.idOf(link.seq),
    status: link.status,
    // The reference types it as a string (empty clears it): no nickname reads as "", never null.
    nickname: link.nickname ?? '',
    favorite: link.favorite,
    country_code: entity.country,
    currency: entity.currency,
    payment_method: entity.payment_method,
    clearing_system: entity.clearing_system,
    entity_type: link.entity_type,
    holder_name: link.holder_name,
    account_identifier: entity.account_mask,
    fields: maskedFields(contract, link.fields),
    outcome: link.outcome,
    name_mismatch: link.name_mismatch,
    name_check:
      link.name_check === null
        ? null
        : {
            result: link.name_check,
            suggested_name: link.name_check_suggestion,
            checked_at: isoOrNull(link.name_checked_at)!,
          },
    created_at: isoOrNull(link.created_at)!,
    updated_at: isoOrNull(link.updated_at)!,
  };
}
