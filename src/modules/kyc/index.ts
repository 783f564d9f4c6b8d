/**
 * The KYC area's one public file (docs/kyc.md): the routes, hosted screens, operator routes and
 * job handlers the composition roots register, and what other areas check or reuse (the level a
 * flow needs, a member's profile, the image checks of an upload). Another area imports this file
 * and nothing else of `kyc/` (`npm run lint:deps`).
 */
export { kycRoutes } from './routes.js';
export { kycScreens } from './screens.js';
export { kycOperatorRoutes } from './operator-routes.js';
export { kycJobHandlers } from './workers.js';
export { minKycLevel, profileOfMember, profileStatusOf } from './queries.js';
export { imageFields, sniffImageType, validateImage, type ImageFieldName } from './rules.js';
export { highValueRefusals, requireHighValueLevel } from './service.js';
export { sandboxReview } from './check.js';
// The sealing of an uploaded image at rest, for the card supplement images (cards/applications/screens.ts).
export { sealedImageColumns } from './images.js';
// The document and face photo fields of the KYC form, for the card supplement screen (cards/applications/screens.ts).
export { documentPhotoField, imageSizeMaxMb, selfiePhotoField } from './photo-fields.js';
