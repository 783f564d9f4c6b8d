/**
 * Sandbox behaviour injection (a merchant presets how one upstream's money-moving step answers):
 * what areas may import of it (the dependency rule `modules-use-upstream-ports`); the statements
 * are in queries/behaviors.ts.
 */
export { activeBehavior, clearBehaviors, purgeExpiredBehaviors, setBehavior } from './queries/behaviors.js';
