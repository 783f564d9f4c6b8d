/**
 * The arrows between the layers (docs/architecture.md, "Layers"); `npm run lint:deps` in CI.
 *
 *   composition roots (src/main.ts, server.ts, routes.ts, background.ts, src/operator/), and the
 *   applications beside them that use every area (src/console/: the merchant console)
 *     → modules/<area>  → provider-orders (its index.ts)
 *                       → money, events (their index.ts)
 *                       → platform, db, jobs (queue and handler types), upstreams (ports)
 *   provider-orders → money, events, platform, db, jobs, upstreams (ports); nothing below imports it.
 *   money → events (a posting records its event) → platform, db; platform imports neither.
 *   platform, money, events, db, jobs, upstreams, provider-orders import no module and no composition root.
 *
 * There is no list of tolerated violations: a wrong arrow fails the check.
 */
const root = '^src/(main|server|routes|background)\\.ts$|^src/operator/';
const lower = '^src/(platform|money|events|db|jobs|upstreams|provider-orders)/';
/** What an area may import of upstreams: the ports, the plumbing it calls (deadline, sandbox presets), the pure rate maths. */
const upstreamPorts = [
  '^src/upstreams/(index|port|deadline)\\.ts$',
  '^src/upstreams/[^/]+/port\\.ts$',
  '^src/upstreams/queries/behaviors\\.ts$',
];

/** Areas split into sub-areas behind one public index.ts: nothing outside the area imports any other file of it. */
const areasWithIndex = ['remittance', 'cards', 'webhooks', 'events', 'exports', 'sandbox', 'hosted-screens', 'kyc', 'merchants', 'merchant-deposit-address', 'step-up', 'alerts', 'auth', 'exchange', 'earn', 'qrpay', 'withdrawals', 'deposits', 'balances', 'assets', 'ledger-entries', 'members'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'sql-only-in-queries',
      severity: 'error',
      comment: 'SQL lives in queries.ts, tables.ts, a queries/ folder or src/db/ (issue 38): only those use Kysely at run time '
        + '(its sql template, its classes); elsewhere `import type` only. The query builder calls, methods of the handle a '
        + 'function is given, need no import: scripts/check-sql-homes.mjs (in npm run lint:deps) sees them.',
      from: { path: '^src/', pathNot: ['(^|/)(queries|tables)\\.ts$', '/queries/[^/]+\\.ts$', '^src/db/'] },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lower-layers-import-no-module',
      severity: 'error',
      comment: 'platform, money, events, jobs, upstreams and provider-orders know nothing of the business areas; '
        + 'a module plugs in through a composition root.',
      from: { path: '^src/(platform|money|events|jobs|upstreams|provider-orders)/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'nothing-below-imports-the-console',
      severity: 'error',
      comment: 'The console is an application beside the public and operator APIs: it uses the areas, '
        + 'nothing below it uses it (db/schema.ts only for its tables, type-only).',
      from: { path: '^src/(platform|money|events|db|jobs|upstreams|provider-orders|modules)/', pathNot: '^src/db/schema\\.ts$' },
      to: { path: '^src/console/' },
    },
    {
      name: 'schema-imports-console-tables-only',
      severity: 'error',
      from: { path: '^src/db/schema\\.ts$' },
      to: { path: '^src/console/', pathNot: '^src/console/tables\\.ts$' },
    },
    {
      name: 'db-imports-only-module-tables',
      severity: 'error',
      comment: 'Only db/schema.ts reaches into modules, and only for their tables.ts, type-only, to compose the Database.',
      from: { path: '^src/db/', pathNot: '^src/db/schema\\.ts$' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'schema-imports-tables-type-only',
      severity: 'error',
      comment: 'db/schema.ts imports module tables.ts files with `import type` and nothing else of a module.',
      from: { path: '^src/db/schema\\.ts$' },
      to: { path: '^src/modules/', pathNot: '^src/modules/[^/]+/tables\\.ts$' },
    },
    {
      name: 'schema-imports-type-only',
      severity: 'error',
      from: { path: '^src/db/schema\\.ts$' },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-composition-root-below',
      severity: 'error',
      comment: 'Only the composition roots assemble route modules and background work; nothing imports them back.',
      from: { path: '^src/(platform|money|events|db|jobs|upstreams|provider-orders|modules)/' },
      to: { path: root },
    },
    {
      name: 'platform-below-money-and-events',
      severity: 'error',
      comment: 'The platform serves every layer above it: it imports neither the money core nor the events '
        + '(what it needs of them, the webhooks of the OpenAPI document, the composition root gives it).',
      from: { path: '^src/platform/' },
      to: { path: '^src/(money|events)/' },
    },
    {
      name: 'events-below-money',
      severity: 'error',
      comment: 'A posting records its event (money → events); the events never import the money core.',
      from: { path: '^src/events/' },
      to: { path: '^src/money/' },
    },
    {
      name: 'modules-use-money-and-events-index',
      severity: 'error',
      comment: 'Areas use the money core and the events through their one public file each.',
      from: { path: '^src/modules/' },
      to: { path: '^src/(money|events)/', pathNot: '^src/(money|events)/index\\.ts$' },
    },
    {
      name: 'money-imports-nothing-http',
      severity: 'error',
      comment: 'The money core raises its own domain errors; the API edge maps them to HTTP.',
      from: { path: '^src/(money|events)/' },
      to: { path: '(^|/)node_modules/(fastify|@fastify/[^/]+)/|^src/platform/(http|routes|openapi)/|^src/platform/errors\\.ts$' },
    },
    {
      name: 'provider-orders-import-nothing-http',
      severity: 'error',
      comment: 'The provider-order lifecycle raises its own domain errors (errors.ts); '
        + 'the API edge (src/api-errors.ts) maps them to HTTP.',
      from: { path: '^src/provider-orders/' },
      to: { path: '(^|/)node_modules/(fastify|@fastify/[^/]+)/|^src/platform/(http|routes|openapi)/|^src/platform/errors\\.ts$' },
    },
    {
      name: 'provider-orders-sit-above-the-lower-layers',
      severity: 'error',
      comment: 'The provider-order lifecycle uses platform, db, jobs and the upstream ports; '
        + 'none of them (nor the money core or the events) imports it back.',
      from: { path: '^src/(platform|money|events|db|jobs|upstreams)/' },
      to: { path: '^src/provider-orders/' },
    },
    {
      name: 'modules-use-provider-orders-index',
      severity: 'error',
      comment: 'Areas use the shared provider-order lifecycle through its one public file.',
      from: { path: '^src/modules/' },
      to: { path: '^src/provider-orders/', pathNot: '^src/provider-orders/index\\.ts$' },
    },
    {
      name: 'modules-reach-other-areas-through-service-and-queries',
      severity: 'error',
      comment: "A module may use another area's index (its one public file, where it has one), service, queries, pure rules, state "
        + 'and table types; never its routes or workers. '
        + 'The hosted-screen framework is also reached through its screen contract (screen.ts) and page parts (html.ts), which areas build their screens with, '
        + 'and its signed double-submit CSRF (csrf.ts), which the merchant console reuses.',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: [
          '^src/modules/$1/', '^src/modules/[^/]+/(index|service|queries|rules|state|tables)\\.ts$',
          '^src/modules/hosted-screens/(screen|html|csrf)\\.ts$',
        ],
      },
    },
    // An area with a public index.ts (sub-areas inside) is reached only through it, by other areas and the composition roots;
    // db/schema.ts still takes its tables.ts, type-only (the rules above).
    ...areasWithIndex.map((area) => ({
      name: `${area}-reached-through-its-index`,
      severity: 'error',
      comment: `Outside ${area}/, only its index.ts is imported (docs/architecture.md, "Adding an area").`,
      from: { path: '^src/', pathNot: [`^src/modules/${area}/`, '^src/db/schema\\.ts$'] },
      to: { path: `^src/modules/${area}/`, pathNot: `^src/modules/${area}/index\\.ts$` },
    })),
    {
      name: 'modules-use-jobs-queue-only',
      severity: 'error',
      comment: 'Modules enqueue (jobs/queries.ts), implement handlers and tickers (jobs/types.ts) and report failures of their own background work (jobs/failures.ts); running them is the composition root\'s.',
      from: { path: '^src/modules/' },
      to: { path: '^src/jobs/', pathNot: '^src/jobs/(queries|types|failures)\\.ts$' },
    },
    {
      name: 'modules-use-upstream-ports',
      severity: 'error',
      comment: 'Modules call providers through ctx.upstreams and know them by their ports (<provider>/port.ts); the simulators, '
        + 'the factory (create-upstreams.ts), the adapter configuration, the tables and the workers are the upstreams\' own.',
      from: { path: '^src/modules/' },
      to: { path: '^src/upstreams/', pathNot: upstreamPorts },
    },
    {
      name: 'ports-import-no-adapter',
      severity: 'error',
      comment: 'A port (port.ts, <provider>/port.ts, index.ts) states an interface: it never reaches a simulator or the factory.',
      from: { path: '^src/upstreams/(index|port)\\.ts$|^src/upstreams/[^/]+/port\\.ts$' },
      to: {
        path: [
          '^src/upstreams/(create-upstreams|simulated-provider|tables|workers|config)\\.ts$',
          '^src/upstreams/[^/]+/(simulator|settlement-calendar)\\.ts$',
          '^src/upstreams/queries/',
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/|node_modules/(fastify|@fastify|kysely)',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
