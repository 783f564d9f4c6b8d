import type { PageRequest } from './http.js';
import { can, type Permission } from './rules.js';

/** The console's side navigation: its groups and their pages, some shown only where they apply. */

interface NavItem {
  path: string;
  label: string;
  show?: (page: PageRequest) => boolean;
}

const inSandbox = (page: PageRequest) => page.environment === 'sandbox';
const allowedTo = (permission: Permission) => (page: PageRequest) => can(page.session.role, permission);

/** A group of pages, one row each: its path under the environment, its label, and when it is shown (else always). */
const group = (heading: string, rows: [path: string, label: string, show?: NavItem['show']][]) => ({
  heading,
  items: rows.map(([path, label, show]): NavItem => ({ path, label, show })),
});

export const nav: { heading: string; items: NavItem[] }[] = [
  group('Overview', [['', 'Balances']]),
  group('Developers', [
    ['/keys', 'API keys'],
    ['/webhooks', 'Webhooks'],
    ['/deliveries', 'Webhook deliveries'],
    ['/events', 'Events'],
    ['/api-log', 'API calls'],
  ]),
  group('Money', [
    ['/members', 'Members'],
    ['/withdrawals', 'Withdrawals'],
    ['/deposits', 'Deposits'],
    ['/ledger', 'Ledger'],
    ['/exports', 'Exports'],
  ]),
  group('Orders', [
    ['/qr-payments', 'QR payments'],
    ['/remittances', 'Remittances'],
    ['/exchange', 'Exchange orders'],
    ['/earn', 'Earn orders'],
    ['/earn-positions', 'Earn positions'],
    ['/cards', 'Cards'],
  ]),
  group('Settings', [
    ['/tools', 'Sandbox tools', inSandbox],
    ['/helpers', 'Sandbox test helpers', inSandbox],
    ['/branding', 'Branding', allowedTo('branding.write')],
    ['/audit', 'Audit log', allowedTo('audit.read')],
    ['/account', 'Your account'],
  ]),
];
