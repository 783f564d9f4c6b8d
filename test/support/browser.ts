import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { jpegBytes, pngBytes } from './hosted.js';

/**
 * Headless Chromium for the page tests, driven by playwright-core.
 *
 * A system Chromium is used when there is one: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`.
 * Otherwise the Chromium shipped inside the `@sparticuz/chromium` package (a dev dependency, so
 * `npm ci` brings it; no download) is unpacked once per machine into the temporary directory.
 * There is no skip: without a browser, `launchBrowser()` throws and the test fails.
 */

/** The machine's flags for a headless Chromium that never reaches for the network on its own. */
const launchArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const debianChromium = '/usr/bin/chromium';

/** The bundled browser's package folder and version (the unpacked copy is keyed by it). */
function bundledPackage(): { dir: string; version: string } {
  // import.meta.resolve gives .../@sparticuz/chromium/build/esm/index.js
  const dir = dirname(dirname(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium')))));
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { dir, version };
}

/**
 * Unpacks the bundled Chromium into `<tmp>/mwa-chromium-<version>/`. The package unpacks into
 * `os.tmpdir()`, so a child process does it with TMPDIR pointing at a fresh staging folder, which
 * is then renamed into place: a rename is atomic, so test files unpacking at the same time never
 * see a half-written browser (the loser of the race drops its copy).
 */
async function unpackBundled(): Promise<string> {
  const { dir, version } = bundledPackage();
  const target = join(tmpdir(), `mwa-chromium-${version}`);
  const binary = join(target, 'chromium');
  if (existsSync(binary)) return binary;
  const staging = mkdtempSync(join(tmpdir(), 'mwa-chromium-unpack-'));
  try {
    const script =
      `import(${JSON.stringify(join(dir, 'build/esm/index.js'))}).then((m) => ` +
      `m.default.executablePath()).then((p) => process.stdout.write(p))`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
      env: { ...process.env, TMPDIR: staging },
      timeout: 120_000,
    });
    if (stdout !== join(staging, 'chromium'))
      throw new Error(`@sparticuz/chromium unpacked to ${stdout}, expected ${join(staging, 'chromium')}`);
    try {
      renameSync(staging, target);
    } catch (err) {
      if (!existsSync(binary)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** Path of the Chromium the tests drive, and where it came from. */
export async function chromiumExecutable(): Promise<{ path: string; source: string }> {
  if (process.env.CHROMIUM_PATH) {
    if (!existsSync(process.env.CHROMIUM_PATH))
      throw new Error(`CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist`);
    return { path: process.env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' };
  }
  if (existsSync(debianChromium)) return { path: debianChromium, source: 'system' };
  try {
    return { path: await unpackBundled(), source: '@sparticuz/chromium' };
  } catch (err) {
    throw new Error(
      `no Chromium: none at ${debianChromium}, CHROMIUM_PATH unset, and the bundled one ` +
        `(@sparticuz/chromium, installed by npm ci) could not be unpacked: ${String(err)}`,
    );
  }
}

/** Launches headless Chromium; throws (never skips) when none can be started. */
export async function launchBrowser(): Promise<Browser> {
  const { path, source } = await chromiumExecutable();
  try {
    // A minute, not Playwright's three: a launch stuck on a loaded machine fails inside the test's own timeout.
    return await chromium.launch({ executablePath: path, args: launchArgs, timeout: 60_000 });
  } catch (err) {
    throw new Error(`Chromium at ${path} (${source}) did not start: ${String(err)}`);
  }
}

/**
 * Closes a browser, waiting at most `ms`: a Chromium that stopped answering (seen once on a loaded
 * CI machine) must not hold the test file open until the runner stops it; its processes end with
 * the test worker.
 */
export async function closeBrowser(browser: Browser | undefined, ms = 15_000): Promise<void> {
  if (!browser) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const outcome = await Promise.race([
    browser.close().then(
      () => 'closed' as const,
      () => 'closed' as const,
    ),
    gaveUp,
  ]);
  clearTimeout(timer);
  if (outcome === 'timeout')
    process.stderr.write(`browser.close() did not finish within ${ms} ms; left to the worker's exit\n`);
}

/**
 * One browser for the tests of a file (or of a `describe`): call it at that level, and each test
 * awaits the getter. The browser is launched at the first call and closed after the last test of
 * the scope. A launch costs ~1 s of CPU and a browser's processes keep using some while open:
 * tests share one and open a context each (`browser.newContext()`, closed by the test).
 */
export function useBrowser(): () => Promise<Browser> {
  let launched: Promise<Browser> | undefined;
  after(async () => {
    if (launched) await closeBrowser(await launched.catch(() => undefined));
  });
  return () => (launched ??= launchBrowser());
}

/**
 * Screenshots into `dir` (made if missing) for a person to look at: `shot(page, name)` writes `<dir>/<name>.png`
 * of the whole page (of the viewport with `{ fullPage: false }`). Not an assertion: Chromium sometimes answers
 * "Unable to capture screenshot" on a loaded machine (failed once in CI at the first page of a new phone-width
 * context), so a shot is tried twice and then only reported.
 */
export function screenshotsIn(
  dir: string,
): (page: Page, name: string, options?: { fullPage?: boolean }) => Promise<void> {
  mkdirSync(dir, { recursive: true });
  return async (page: Page, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await page.screenshot({ path: join(dir, `${name}.png`), fullPage });
        return;
      } catch (err) {
        if (attempt >= 2) {
          console.log(`# screenshot ${name} not taken: ${(err as Error).message.split('\n')[0]}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
}

/** Attaches a valid photo of the document and of the face to the open hosted screen's form (KYC, card supplement). */
export async function attachPhotos(page: Page): Promise<void> {
  await page
    .getByLabel('Photo of the document')
    .setInputFiles({ name: 'passport.png', mimeType: 'image/png', buffer: pngBytes });
  await page
    .getByLabel('Photo of your face')
    .setInputFiles({ name: 'face.jpg', mimeType: 'image/jpeg', buffer: jpegBytes });
}
