/**
 * The schemas of the service's OpenAPI document (generated: src/generated/openapi.ts), which the SDK's response types
 * alias.
 */

import type { components } from './generated/openapi.js';

export type Schemas = components['schemas'];
