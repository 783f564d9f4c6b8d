/** Hosted screens: frame settings and the sandbox completion helper. */
import type { HostedScreenSandboxOutcome, HostedScreenSettings, HostedScreenTicketState } from '../types.js';
import { seg, key, type ResourceHost, type WriteOptions } from './shared.js';

export interface HostedScreensResource {
  /** GET /v1/hosted-screens/settings. */
  getSettings(): Promise<HostedScreenSettings>;
  /** PUT /v1/hosted-screens/settings (idempotent): the origins allowed to frame the screens. */
  putSettings(body: HostedScreenSettings, opts?: WriteOptions): Promise<HostedScreenSettings>;
  /** Sandbox: POST /v1/sandbox/hosted-screens/{ticket_id}/complete (idempotent): finishes a screen without a browser.
   * */
  sandboxComplete(
    ticketId: string,
    outcome: HostedScreenSandboxOutcome,
    opts?: WriteOptions,
  ): Promise<HostedScreenTicketState>;
}

export function createHostedScreensResource(host: ResourceHost): HostedScreensResource {
  return {
    getSettings: () => host.request<HostedScreenSettings>({ method: 'GET', path: '/v1/hosted-screens/settings' }),
    putSettings: (body, opts) =>
      host.request<HostedScreenSettings>({
        method: 'PUT',
        path: '/v1/hosted-screens/settings',
        body,
        idempotencyKey: key(opts),
      }),
    sandboxComplete: (ticketId, outcome, opts) =>
      host.request<HostedScreenTicketState>({
        method: 'POST',
        path: `/v1/sandbox/hosted-screens/${seg(ticketId)}/complete`,
        body: { outcome },
        idempotencyKey: key(opts),
      }),
  };
}
