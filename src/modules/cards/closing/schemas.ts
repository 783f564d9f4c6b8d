import { Type } from 'typebox';

/** Route schemas of card closing. The single source for validation, types and OpenAPI. */

export const CloseResult = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('closing'), Type.Literal('closed')], {
    description: '`closed` when the issuer confirmed at once; `closing` while its answer is pending',
  }),
});
