/**
 * The step-up area's one public file (docs/step-up.md): the hosted screen and operator routes the
 * composition roots register, and what a flow that needs the member's confirmation calls (the
 * route option, the check in the service, the object reference). Another area imports this file
 * and nothing else of `step-up/` (`npm run lint:deps`).
 */
export { stepUpScreen } from './screen.js';
export { stepUpOperatorRoutes } from './operator-routes.js';
export { stepUpObjectRef } from './rules.js';
export { requireStepUp, stepUpCall, stepUpErrors, stepUpInBatch, stepUpNeeded, type StepUpCall } from './service.js';
