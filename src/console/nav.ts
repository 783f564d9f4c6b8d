import type { PageRequest } from './http.js';
import { can } from './rules.js';

/** The console's side navigation: its groups and their pages, some shown only where they apply. */

interface NavItem {
  path: string;
  label: string;
  show?: (page: PageRequest) => boolean;
}
export const nav: { heading: string; items: NavItem[] }[] = [
  { heading: 'Overview', items: [{ path: '', label: 'Balances' }] },
  {
    heading: 'Developers',
    items: [
      { path: '/keys', label: 'API keys' },
      { path: '/webhooks', label: 'Webhooks' },
      { path: '/deliveries', label: 'Webhook deliveries' },
      { path: '/events', label: 'Events' },
      { path: '/api-log', label: 'API calls' },
    ],
  },
  {
    heading: 'Money',
    items: [
      { path: '/members', label: 'Members' },
      { path: '/withdrawals', label: 'Withdrawals' },
      { path: '/deposits', label: 'Deposits' },
      { path: '/ledger', label: 'Ledger' },
      { path: '/exports', label: 'Exports' },
    ],
  },
  {
    heading: 'Orders',
    items: [
      { path: '/qr-payments', label: 'QR payments' },
      { path: '/remittances', label: 'Remittances' },
      { path: '/exchange', label: 'Exchange orders' },
      { path: '/earn', label: 'Earn orders' },
      { path: '/earn-positions', label: 'Earn positions' },
      { path: '/cards', label: 'Cards' },
    ],
  },
  {
    heading: 'Settings',
    items: [
      { path: '/tools', label: 'Sandbox tools', show: (p) => p.environment === 'sandbox' },
      { path: '/helpers', label: 'Sandbox test helpers', show: (p) => p.environment === 'sandbox' },
      { path: '/branding', label: 'Branding', show: (p) => can(p.session.role, 'branding.write') },
      { path: '/audit', label: 'Audit log', show: (p) => can(p.session.role, 'audit.read') },
      { path: '/account', label: 'Your account' },
    ],
  },
];
