/**
 * The exports area's one public file (docs/exports.md): the routes, the job handlers and tickers,
 * and the export functions the merchant console's ledger pages call. Another area imports this
 * file and nothing else of `exports/` (`npm run lint:deps`).
 */
export { exportRoutes } from './routes.js';
export { exportJobHandlers, exportTickers } from './workers.js';
export { createExport, exportKinds, listExports, type ExportKind } from './service.js';
export { exportFileHeaders, openExportFile } from './file.js';
