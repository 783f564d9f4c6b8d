/**
 * The hosted-screen framework's one public file (docs/hosted-screens.md): the screen contract
 * (screen.ts), the page parts areas build their screens with (html.ts), the signed double-submit
 * CSRF the merchant console reuses (csrf.ts), the tickets other areas issue and settle, the
 * branding, and the routes the composition roots register. Another area imports this file and
 * nothing else of `hosted-screens/` (`npm run lint:deps`).
 */
export * from './screen.js';
export * from './html.js';
export * from './csrf.js';
export { hostedOrigin, ticketScope, ticketTtlSeconds, ticketView, type Ticket } from './rules.js';
export { completeTicket, findTicket, voidMemberTickets, voidSubjectTickets, voidTicket } from './queries.js';
export { completeInSandbox, issueTicket } from './service.js';
// The merchant's branding on its screens, for the areas that name the merchant and the console that sets it.
export {
  contrastRatio,
  displayNameMax,
  logoBytesMax,
  logoPath,
  normaliseAccent,
  readBranding,
  saveBranding,
  sniffImage,
  textOn,
  type BrandingChange,
} from './branding.js';
export { hostedScreenRoutes } from './routes.js';
export { hostedScreenOperatorRoutes } from './operator-routes.js';
