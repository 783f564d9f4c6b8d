import { Type } from 'typebox';
import { MemberRef } from '../../platform/routes/list-filters.js';

export const externalMemberIdPattern = '^[A-Za-z0-9_.:-]{1,64}$';

export const MemberProfile = Type.Object(
  {
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone: Type.Optional(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164' })),
    first_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    date_of_birth: Type.Optional(Type.String({ format: 'date' })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' })),
  },
  { title: 'MemberProfile', additionalProperties: false },
);

export const CreateMemberBody = Type.Object(
  {
    external_member_id: Type.String({
      pattern: externalMemberIdPattern,
      description:
        "the merchant's own id: 1 to 64 of A-Z a-z 0-9 _ . : -, not in the service's own form mem_<uuid> in " +
        'any letter case (`invalid_request`: x-on-behalf-of would name another member)',
    }),
    profile: Type.Optional(MemberProfile),
  },
  { title: 'CreateMemberRequest' },
);

export const Member = Type.Object(
  {
    id: Type.String({ description: 'mem_<uuid>' }),
    external_member_id: Type.String(),
    status: Type.String({ description: 'active or suspended' }),
    kyc_level: Type.Integer({ description: '0 = no KYC; 1 and 2 are levels businesses require' }),
    kyc_profile_status: Type.Union([Type.String(), Type.Null()], {
      description:
        "The KYC profile's status: pending_review, approved or rejected; null before the first KYC screen is submitted",
    }),
    profile: MemberProfile,
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Member' },
);

export const MemberIdParams = Type.Object({
  id: MemberRef,
});
