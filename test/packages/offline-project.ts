import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);

/** One entry of package-lock.json's `packages`. */
interface LockEntry {
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly [field: string]: unknown;
}

/**
 * The entries of the repository's lockfile that `names` need, at the same paths: each name and,
 * transitively, what it depends on, resolved as Node resolves (nested node_modules first, then
 * up to the top). Marked as production dependencies, so a fresh project that depends on `names`
 * installs exactly them from npm's cache (`--offline`), by their integrity.
 */
export function lockEntriesFor(
  packages: Readonly<Record<string, LockEntry>>,
  names: readonly string[],
): Record<string, LockEntry> {
  const picked: Record<string, LockEntry> = {};
  const resolve = (from: string, name: string): string => {
    for (let dir = from; ; ) {
      const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
      if (packages[candidate] !== undefined) return candidate;
      if (dir === '') throw new Error(`the lockfile has no ${name} reachable from ${from || 'the root'}`);
      const at = dir.lastIndexOf('/node_modules/');
      dir = at === -1 ? '' : dir.slice(0, at);
    }
  };
  const visit = (path: string) => {
    if (picked[path] !== undefined) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = packages[path] as LockEntry;
    picked[path] = entry;
    const optionalPeers = Object.entries(entry.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name);
    const needed = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers.includes(name)),
    ];
    for (const name of needed) visit(resolve(path, name));
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      try {
        visit(resolve(path, name));
      } catch {
        // an optional dependency for another platform: not in the tree
      }
    }
  };
  for (const name of names) visit(resolve('', name));
  return picked;
}

/**
 * A fresh project in `dir` that depends on `tarballs` (file names in `dir`) and on `registryDeps`
 * (name -> exact version, as the repository pins them), installed with npm from its cache only:
 * no network, no TypeScript loader. The lockfile is seeded with the repository's entries for
 * everything the tarballs and registryDeps need, so npm resolves nothing from the registry.
 */
export async function installOffline(options: {
  readonly dir: string;
  readonly repoLockfile: string;
  /** The packed packages: file name in `dir`, integrity (as `npm pack --json` answers) and manifest. */
  readonly tarballs: readonly PackedPackage[];
  readonly registryDeps: Readonly<Record<string, string>>;
}): Promise<void> {
  const lock = JSON.parse(await readFile(options.repoLockfile, 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const dependencies = {
    ...Object.fromEntries(options.tarballs.map((t) => [t.manifest.name, `file:${t.filename}`])),
    ...options.registryDeps,
  };
  const manifest = {
    name: 'ackline-user-app',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies,
  };
  await writeFile(join(options.dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const tarballEntries = Object.fromEntries(
    options.tarballs.map((t) => [
      `node_modules/${t.manifest.name}`,
      {
        version: t.manifest.version,
        resolved: `file:${t.filename}`,
        integrity: t.integrity,
        ...(t.manifest.dependencies ? { dependencies: t.manifest.dependencies } : {}),
        ...(t.manifest.peerDependencies ? { peerDependencies: t.manifest.peerDependencies } : {}),
      },
    ]),
  );
  const needed = [
    ...Object.keys(options.registryDeps),
    ...options.tarballs.flatMap((t) => Object.keys(t.manifest.dependencies ?? {})),
  ];
  const seeded = {
    name: manifest.name,
    version: manifest.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: manifest.name, version: manifest.version, dependencies },
      ...tarballEntries,
      ...lockEntriesFor(lock.packages, needed),
    },
  };
  await writeFile(join(options.dir, 'package-lock.json'), `${JSON.stringify(seeded, null, 2)}\n`);
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
    cwd: options.dir,
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** A package packed by `npm pack --json`, with its manifest. */
export interface PackedPackage {
  readonly filename: string;
  readonly integrity: string;
  readonly files: readonly { readonly path: string; readonly size: number }[];
  readonly unpackedSize: number;
  readonly size: number;
  readonly manifest: {
    readonly name: string;
    readonly version: string;
    readonly dependencies?: Record<string, string>;
    readonly peerDependencies?: Record<string, string>;
  };
}
