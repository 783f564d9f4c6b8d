// `npm start`: runs the compiled server, dist/main.js, in this process.
//
// In a source checkout (src/ present) dist/ is built first when it is missing or was built from
// other sources (scripts/build.mjs records their hash), so `npm ci && npm start` serves what the
// sources say. A production install (scripts/build-production.sh) has no src/: dist/ is run as it
// is. There, or under a supervisor, run `node --enable-source-maps dist/main.js` directly: the
// server is then the process that receives the signals (docs/deployment.md).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

if (existsSync(join(root, 'src/main.ts'))) {
  const { buildIsCurrent, buildServer } = await import('./build.mjs');
  if (!buildIsCurrent()) {
    if (!existsSync(join(root, 'node_modules/esbuild'))) {
      console.error(
        'dist/ is missing or older than src/, and esbuild (a dev dependency) is not installed to build it.\n' +
          ('Run `npm ci && npm start`, or make a production install with scripts/build-production.sh ' +
            '(docs/deployment.md).'),
      );
      process.exit(1);
    }
    const started = performance.now();
    console.log('Building dist/ from src/ (npm run build)...');
    await buildServer();
    console.log(`Built dist/main.js in ${Math.round(performance.now() - started)} ms`);
  }
}

// As `node --enable-source-maps`: stack traces name the TypeScript sources' lines.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(join(root, 'dist/main.js')).href);
