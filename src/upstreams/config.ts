import { upstreamNames, type UpstreamName } from './port.js';

/** Adapters built in. A real provider's adapter is added here and chosen by configuration. */
export const adapterKinds = ['simulator'] as const;
export type AdapterKind = (typeof adapterKinds)[number];

/**
 * The adapter of each upstream: `UPSTREAM_ADAPTERS=qrpay=simulator,chain=simulator` and/or
 * `UPSTREAM_<NAME>_ADAPTER=simulator` (the per-provider variable wins); default `simulator`.
 * An unknown upstream or adapter name stops start-up.
 */
export function upstreamAdaptersFrom(env: NodeJS.ProcessEnv): Record<UpstreamName, AdapterKind> {
  const out = Object.fromEntries(upstreamNames.map((n) => [n, 'simulator'])) as Record<UpstreamName, AdapterKind>;
  const set = (name: string, adapter: string, source: string) => {
    const upstream = name.trim().toLowerCase();
    const kind = adapter.trim().toLowerCase();
    if (!(upstreamNames as readonly string[]).includes(upstream))
      throw new Error(`${source}: unknown upstream ${name}`);
    if (!(adapterKinds as readonly string[]).includes(kind))
      throw new Error(`${source}: unknown adapter ${adapter} for ${upstream} (known: ${adapterKinds.join(', ')})`);
    out[upstream as UpstreamName] = kind as AdapterKind;
  };
  for (const part of (env.UPSTREAM_ADAPTERS ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, adapter, ...rest] = part.split('=');
    if (!name || !adapter || rest.length > 0) throw new Error(`UPSTREAM_ADAPTERS: expected name=adapter, got ${part}`);
    set(name, adapter, 'UPSTREAM_ADAPTERS');
  }
  for (const name of upstreamNames) {
    const value = env[`UPSTREAM_${name.toUpperCase()}_ADAPTER`];
    if (value) set(name, value, `UPSTREAM_${name.toUpperCase()}_ADAPTER`);
  }
  return out;
}

/** `TRON, ethereum` → ['TRON', 'ETHEREUM']. */
export function networkListFrom(value: string | undefined, fallback: readonly string[]): string[] {
  if (value === undefined || value.trim() === '') return [...fallback];
  return value
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
}
