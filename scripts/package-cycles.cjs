// dependency-cruiser for a publishable package's sources (scripts/check-package.sh): no import
// cycle, type-only imports included (the root's .dependency-cruiser.cjs covers src/ only).
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: {},
      to: { circular: true },
    },
  ],
  options: { doNotFollow: { path: 'node_modules' }, tsPreCompilationDeps: true },
};
