import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUPERUSER_ROLE, tokenFor } from '../support/admin-fixtures.ts';
import {
  type EmbeddedProcess,
  REPO_ROOT,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';
import { installedClosure } from './installed-size.ts';
import { installOffline, type PackedPackage, run } from './offline-project.ts';

// Issue 14: the packages as a new user gets them. Each is packed, the tarballs are installed into
// a fresh project from npm's cache (no network, no TypeScript loader), and that project runs plain
// Node against the embedded stack, type-checks a strict TypeScript app and synthesizes a CDK app.

const PACKAGE_DIRS = ['./packages/client', './packages/lambda', './packages/cdk'] as const;
/** What the user's app brings itself, at the versions the repository pins. */
const APP_DEPENDENCIES = {
  'aws-cdk-lib': '2.276.0',
  constructs: '10.8.1',
  typescript: '5.9.3',
  '@types/node': '20.19.43',
};
const FIXTURES = join(import.meta.dirname, 'fixtures');

let project: string;
let packed: PackedPackage[];
let server: PackedPackage;
let stack: EmbeddedProcess;

/** Runs `node <args>` in the project, as a user would: no loader, no NODE_OPTIONS. */
function node(args: readonly string[], env: Record<string, string> = {}) {
  const { NODE_OPTIONS: _loader, ...inherited } = process.env;
  return run(process.execPath, [...args], {
    cwd: project,
    env: { ...inherited, ...env },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

beforeAll(async () => {
  stack = await startEmbeddedProcess({ timeoutMs: 90_000 });
  await run('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, timeout: 120_000 });
  project = await mkdtemp(join(tmpdir(), 'ackline-user-app-'));
  const packedJson = await run(
    'npm',
    [
      'pack',
      '--json',
      '--ignore-scripts',
      '--loglevel=error',
      '--pack-destination',
      project,
      ...PACKAGE_DIRS,
    ],
    { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  packed = await Promise.all(
    (JSON.parse(packedJson.stdout) as Omit<PackedPackage, 'manifest'>[]).map(async (result, index) => ({
      ...result,
      manifest: JSON.parse(
        await readFile(join(REPO_ROOT, PACKAGE_DIRS[index] as string, 'package.json'), 'utf8'),
      ),
    })),
  );
  const serverJson = await run(
    'npm',
    ['pack', '--json', '--dry-run', '--ignore-scripts', '--loglevel=error'],
    {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  server = {
    ...(JSON.parse(serverJson.stdout) as PackedPackage[])[0],
    manifest: { name: '@ackline/server', version: '' },
  } as PackedPackage;
  await installOffline({
    dir: project,
    repoLockfile: join(REPO_ROOT, 'package-lock.json'),
    tarballs: packed,
    registryDeps: APP_DEPENDENCIES,
  });
  for (const file of await readdir(FIXTURES)) await copyFile(join(FIXTURES, file), join(project, file));
}, 300_000);

afterAll(async () => {
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
  if (project) await rm(project, { recursive: true, force: true });
});

const byName = (name: string) => packed.find((p) => p.manifest.name === name) as PackedPackage;

describe('the packages a user installs', () => {
  it('ship only what their users need', () => {
    const paths = (p: PackedPackage) => p.files.map((file) => file.path);
    for (const p of packed) {
      for (const path of paths(p)) {
        expect(path).toMatch(
          /^(package\.json|README\.md|dist\/.*\.(js|d\.ts)|dist\/consumer-runner\/index\.mjs(\.map)?)$/,
        );
      }
    }
    expect(
      paths(byName('ackline')).filter(
        (path) => !/^dist\/(client|domain|pulsar-client)\/|^dist\/index\.|^package\.json$/.test(path),
      ),
    ).toEqual([]);
    expect(paths(byName('@ackline/cdk')).filter((path) => path.startsWith('dist/'))).toEqual(
      expect.arrayContaining([
        'dist/infra/constructs/subscription-consumer.js',
        'dist/infra/constructs/subscription-consumer.d.ts',
        // The subscription runner, prebuilt: the construct deploys it, the user's app bundles nothing.
        'dist/consumer-runner/index.mjs',
      ]),
    );
    // The user's handler package: acklineConsumer() and its types, nothing of ackline's engine.
    expect(
      paths(byName('@ackline/lambda')).filter(
        (path) =>
          !/^dist\/lambda\/|^dist\/application\/consumers\/consumer-message\.|^package\.json$/.test(path),
      ),
    ).toEqual([]);
    expect(paths(byName('@ackline/cdk')).filter((path) => /stack|functions\/|adapters\//.test(path))).toEqual(
      [],
    );
    // The server: handlers, CLI, embedded stack, and the guide with the docs/ it links to (not the
    // generated docs/api/); no tests, bench, scripts or packages.
    const serverPaths = paths(server);
    expect(serverPaths).toEqual(
      expect.arrayContaining([
        'bin/ackline-admin.js',
        'bin/ackline-local.js',
        'infra/local/main.ts',
        'README.md',
        'docs/sdk.md',
        'docs/design/invariants.md',
      ]),
    );
    expect(serverPaths.filter((path) => path.startsWith('docs/api/'))).toEqual([]);
    expect(
      serverPaths.filter((path) => /^(test|bench|scripts|packages|\.ci)\/|\.test\.ts$/.test(path)),
    ).toEqual([]);
    console.log(
      [...packed, server]
        .map(
          (p) =>
            `${p.manifest.name}: ${p.files.length} files, tarball ${p.size} B, unpacked ${p.unpackedSize} B`,
        )
        .join('\n'),
    );
  });

  it('depend on nothing they do not use: the SDK and the handler on nothing, the construct only on its peers', async () => {
    expect(byName('ackline').manifest.dependencies ?? {}).toEqual({});
    expect(byName('@ackline/lambda').manifest.dependencies ?? {}).toEqual({});
    expect(byName('@ackline/cdk').manifest.dependencies ?? {}).toEqual({});
    expect(byName('@ackline/cdk').manifest.peerDependencies).toEqual({
      'aws-cdk-lib': '^2.276.0',
      constructs: '^10.8.1',
    });
    // What the compiled SDK imports: Node's built-ins and its own files only.
    const sdkDir = join(project, 'node_modules/ackline/dist');
    const imported = new Set<string>();
    for (const file of await readdir(sdkDir, { recursive: true })) {
      if (!file.endsWith('.js')) continue;
      const source = await readFile(join(sdkDir, file), 'utf8');
      for (const match of source.matchAll(/^(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
        if (!match[1]?.startsWith('.')) imported.add(match[1] as string);
      }
    }
    expect([...imported]).toEqual(['node:timers/promises']);
    const sizes = await Promise.all(
      packed.map(async (p) => ({
        name: p.manifest.name,
        ...(await installedClosure(join(project, 'node_modules'), p.manifest.name)),
      })),
    );
    console.log(
      sizes.map((s) => `${s.name}: installs ${s.packages.length} packages, ${s.bytes} B`).join('\n'),
    );
    const sdk = sizes.find((s) => s.name === 'ackline');
    expect(sdk?.packages).toEqual(['ackline']);
    // The SDK and ackline/pulsar-client (about 140 kB of it), compiled with their TSDoc.
    expect(sdk?.bytes).toBeLessThan(550_000);
    expect(sizes.find((s) => s.name === '@ackline/cdk')?.packages).toEqual(['@ackline/cdk']);
    expect(sizes.find((s) => s.name === '@ackline/lambda')?.packages).toEqual(['@ackline/lambda']);
  });

  it('load in plain Node and produce and consume against the embedded stack (.mjs, no loader)', async () => {
    const loaded = await node(['load-all.mjs']);
    expect(JSON.parse(loaded.stdout)).toEqual({ sdk: 'function', lambda: 'function', cdk: 'function' });
    const { stdout } = await node(['produce-consume.mjs'], {
      ACKLINE_URL: stack.url,
      ACKLINE_AUTH_TOKEN: tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }),
    });
    const { sent, received } = JSON.parse(stdout) as {
      sent: string[];
      received: { id: string; value: string }[];
    };
    expect(sent).toHaveLength(3);
    expect(received.map((message) => message.id).sort()).toEqual([...sent].sort());
    expect(received.map((message) => message.value).sort()).toEqual(['one', 'three', 'two']);
  });

  it('run pulsar-client code with only its import changed: require (CommonJS) and import (ESM) of ackline/pulsar-client', async () => {
    const { stdout } = await node(['pulsar-client.cjs'], {
      ACKLINE_URL: stack.url,
      ACKLINE_AUTH_TOKEN: tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }),
    });
    const { sent, received } = JSON.parse(stdout) as {
      sent: string[];
      received: { id: string; value: string }[];
    };
    expect(sent).toHaveLength(3);
    expect(received.map((message) => message.id)).toEqual(sent);
    expect(received.map((message) => message.value)).toEqual(['one', 'two', 'three']);
    const imported = await node(['pulsar-client.mjs']);
    expect(JSON.parse(imported.stdout)).toEqual({
      sameClient: true,
      latest: '(9223372036854775807,9223372036854775807,-1,-1)',
      error: 3,
    });
  });

  it('type-check in a strict TypeScript app (NodeNext and Bundler, exactOptionalPropertyTypes), the SDK with skipLibCheck off', async () => {
    const tsc = join(project, 'node_modules/typescript/bin/tsc');
    const results = await Promise.allSettled(
      ['tsconfig.nodenext.json', 'tsconfig.bundler.json', 'tsconfig.sdk.json'].map((config) =>
        node([tsc, '-p', config]),
      ),
    );
    const failures = results.flatMap((result) =>
      result.status === 'rejected'
        ? [String((result.reason as { stdout?: string }).stdout ?? result.reason)]
        : [],
    );
    expect(failures).toEqual([]);
  });

  it('synthesize a CDK app that wires a function to a subscription by topic and subscription name', async () => {
    const outdir = join(project, 'cdk.out');
    await node(['cdk-app.mjs', outdir]);
    const template = JSON.parse(await readFile(join(outdir, 'Orders.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const types = Object.values(template.Resources).map((resource) => resource.Type);
    expect(types.filter((type) => type === 'AWS::Lambda::EventSourceMapping')).toHaveLength(2);
    expect(types.filter((type) => type === 'Custom::AWS')).toHaveLength(2);
    const functions = Object.values(template.Resources).filter(
      (resource) => resource.Type === 'AWS::Lambda::Function',
    );
    // The user's function gets no ackline environment; the runner beside it is configured by names.
    const runner = functions.find((resource) =>
      JSON.stringify(resource.Properties.Environment ?? {}).includes('ACKLINE_TOPIC'),
    );
    expect(JSON.stringify(runner?.Properties.Environment)).toContain('persistent://public/default/orders');
    const billing = functions.find(
      (resource) => resource !== runner && resource.Properties.Handler === 'index.handler',
    );
    expect(billing?.Properties.Environment).toBeUndefined();
    // The runner's asset is the prebuilt bundle, staged from the installed package (no bundler here).
    const key = (runner?.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    expect((await readdir(join(outdir, `asset.${key}`))).sort()).toEqual(['index.mjs', 'index.mjs.map']);
  });
});
