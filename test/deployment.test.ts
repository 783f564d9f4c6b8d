import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { loadConfig } from '../src/platform/config/config.js';
import { startTestService } from './support/service.js';

/**
 * The container recipe and the compose file (docs/deployment.md), checked without Docker: no
 * engine runs here. What the image's build does is proven by scripts/check-production.sh in CI;
 * these tests hold the files to the same steps and to the Compose specification.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(`${root}/${path}`, 'utf8');

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments and blank lines left out. */
function dockerfile(): Instruction[] {
  const logical = read('Dockerfile')
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return logical
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

/** Each stage's instructions, from its FROM to the next. */
function stages(): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of dockerfile()) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

/** Compose's interpolation of `${NAME}`, `${NAME:-default}` and `${NAME:?message}` (the forms compose.yaml uses). */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g,
    (_all, name: string, operator: string | undefined, word: string) => {
      const set = env[name] !== undefined && env[name] !== '';
      if (set) return env[name];
      if (operator === ':?') throw new Error(`required variable ${name} is missing: ${word}`);
      return operator === ':-' ? word : '';
    },
  );
}

function composeFile(): any {
  return parse(read('compose.yaml'), { merge: true });
}

const apiServices = (compose: any) => Object.entries<any>(compose.services).filter(([, service]) => service.build);

describe('compose.yaml', () => {
  it('is valid against the Compose specification', () => {
    // The specification's JSON schema (compose-spec/compose-spec, schema/compose-spec.json at
    // 170098ba07d9, Apache-2.0), kept beside the tests: nothing is fetched when they run.
    const schema = JSON.parse(read('test/support/compose-spec.json'));
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false, validateSchema: false }).compile(
      schema,
    );
    const compose = composeFile();
    assert.equal(validate(compose), true, JSON.stringify(validate.errors, null, 2));
    // The schema catches a misspelt key: the check can fail.
    compose.services.postgres.helthcheck = compose.services.postgres.healthcheck;
    assert.equal(validate(compose), false);
  });

  it('runs two processes of the image on one PostgreSQL database, each on its own ports', () => {
    const compose = composeFile();
    const postgres = compose.services.postgres;
    assert.match(postgres.image, /^postgres:\d+/);
    assert.ok(
      postgres.volumes.some((v: string) => v.startsWith('postgres-data:')),
      'PostgreSQL keeps its data in a named volume',
    );
    assert.ok('postgres-data' in compose.volumes);
    assert.ok(postgres.healthcheck.test.includes('pg_isready'));

    const apis = apiServices(compose);
    assert.equal(apis.length, 2);
    const hostPorts = apis.flatMap(([, service]) =>
      service.ports.map((p: string) => interpolate(p, {}).split(':').slice(0, -1).join(':')),
    );
    assert.equal(new Set(hostPorts).size, hostPorts.length, `host ports taken twice: ${hostPorts.join(', ')}`);
    for (const [name, service] of apis) {
      assert.equal(service.image, apis[0][1].image, `${name} runs the same image`);
      assert.equal(service.init, true, `${name}: an init passes SIGTERM on and reaps`);
      assert.deepEqual(service.depends_on, { postgres: { condition: 'service_healthy' } }, name);
      assert.ok(service.stop_grace_period, `${name}: time to drain`);
      const url = new URL(interpolate(service.environment.DATABASE_URL, {}));
      assert.equal(url.hostname, 'postgres');
      assert.equal(
        decodeURIComponent(url.password),
        postgres.environment.POSTGRES_PASSWORD.replace(/^\$\{POSTGRES_PASSWORD:-(.*)\}$/, '$1'),
      );
      assert.equal(url.pathname.slice(1), postgres.environment.POSTGRES_DB);
    }
  });

  it('requires ADMIN_TOKEN and HOSTED_SCREEN_KEY, and the environment it gives passes the configuration check', () => {
    const [[, api]] = apiServices(composeFile());
    const given = {
      ADMIN_TOKEN: 'adm_0123456789abcdef0123456789',
      HOSTED_SCREEN_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    for (const missing of Object.keys(given)) {
      const env = { ...given, [missing]: '' };
      assert.throws(
        () => Object.values<string>(api.environment).map((v) => interpolate(String(v), env)),
        new RegExp(`required variable ${missing} is missing`),
      );
    }
    const env = Object.fromEntries(
      Object.entries<string>(api.environment).map(([name, value]) => [name, interpolate(String(value), given)]),
    );
    const config = loadConfig(env);
    assert.equal(config.adminToken, given.ADMIN_TOKEN);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.adminHost, '0.0.0.0');
    assert.match(config.databaseUrl ?? '', /^postgres:\/\/[^@]+@postgres:5432\//);
    assert.equal(config.logLevel, 'info');
  });
});

describe('Dockerfile', () => {
  it('builds with scripts/build-production.sh in a build stage and runs its result as a non-root user', () => {
    const [build, ...rest] = stages();
    const runtime = rest.at(-1);
    assert.ok(runtime, 'a build stage and a runtime stage');
    const image = /^NODE_IMAGE=(\S+)$/.exec(dockerfile().find((i) => i.keyword === 'ARG')?.args ?? '')?.[1];
    assert.match(image ?? '', /^node:\d+-[a-z]+-slim$/, 'an official Node slim image');
    assert.match(build[0].args, /^\$\{NODE_IMAGE\} AS build$/);
    assert.equal(runtime[0].args, '${NODE_IMAGE}');
    assert.ok(
      build.some((i) => i.keyword === 'RUN' && /npm ci\b.*&& sh scripts\/build-production\.sh \/app$/.test(i.args)),
      'the build stage runs the production script',
    );
    assert.ok(
      runtime.some((i) => i.keyword === 'COPY' && i.args === '--from=build /app /app'),
      'the runtime stage copies only the production install',
    );
    const users = runtime.filter((i) => i.keyword === 'USER').map((i) => i.args);
    assert.deepEqual(users, ['node']);
    const cmd = runtime.filter((i) => i.keyword === 'CMD');
    assert.equal(cmd.length, 1);
    // Exec form: the runtime signals node itself, not a shell.
    assert.deepEqual(JSON.parse(cmd[0].args), ['node', '--enable-source-maps', 'dist/main.js']);
    assert.ok(!runtime.some((i) => i.keyword === 'ENTRYPOINT'));
  });

  it('keeps what a run or an install leaves out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    for (const entry of ['.git', '**/node_modules', 'dist', 'data', '.env']) assert.ok(ignored.includes(entry), entry);
    for (const needed of ['src', 'scripts', 'package.json', 'package-lock.json'])
      assert.ok(!ignored.includes(needed), needed);
  });

  it("HEALTHCHECK's command exits 0 while /readyz answers 200 and 1 when nothing listens", async () => {
    const healthcheck = dockerfile().filter((i) => i.keyword === 'HEALTHCHECK');
    assert.equal(healthcheck.length, 1);
    const command: string[] = JSON.parse(/CMD (\[.*\])$/.exec(healthcheck[0].args)?.[1] ?? 'null');
    assert.equal(command[0], 'node');
    assert.match(command.join(' '), /\/readyz/);
    // Run as a process of its own: the service answers from this one.
    const probe = async (port: number) => {
      const child = spawn(process.execPath, command.slice(1), {
        env: { ...process.env, PORT: String(port) },
        stdio: 'ignore',
        timeout: 20_000,
      });
      const [code] = await once(child, 'exit');
      return code;
    };
    const service = await startTestService();
    const port = Number(new URL(service.publicUrl).port);
    try {
      assert.equal(await probe(port), 0);
    } finally {
      await service.close();
    }
    assert.equal(await probe(port), 1);
  });
});
