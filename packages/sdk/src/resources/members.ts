/** Members: create, read, suspend, revoke sessions. */
import type { CreateMemberBody, Member, MemberSuspension, SessionRevocation } from '../types.js';
import { seg, writeOpts, type ResourceHost, type WriteOptions } from './shared.js';

export interface MembersResource {
  /** POST /v1/members (idempotent, signed). 409 `duplicate_resource` when the external id is taken. */
  create(body: CreateMemberBody, opts?: WriteOptions): Promise<Member>;
  /** GET /v1/members/{id}; `id` is `mem_<uuid>` or the external id. */
  get(id: string): Promise<Member>;
  /** POST /v1/members/{id}/suspend (idempotent). */
  suspend(id: string, opts?: WriteOptions): Promise<MemberSuspension>;
  /** POST /v1/members/{external_member_id}/sessions/revoke (idempotent). Only the external id is accepted. */
  revokeSessions(externalId: string, opts?: WriteOptions): Promise<SessionRevocation>;
}

export function createMembersResource(host: ResourceHost): MembersResource {
  return {
    create: (body, opts) => host.request<Member>({ method: 'POST', path: '/v1/members', body, ...writeOpts(opts) }),
    get: (id) => host.request<Member>({ method: 'GET', path: `/v1/members/${seg(id)}` }),
    suspend: (id, opts) =>
      host.request<MemberSuspension>({ method: 'POST', path: `/v1/members/${seg(id)}/suspend`, ...writeOpts(opts) }),
    revokeSessions: (externalId, opts) =>
      host.request<SessionRevocation>({
        method: 'POST',
        path: `/v1/members/${seg(externalId)}/sessions/revoke`,
        ...writeOpts(opts),
      }),
  };
}
