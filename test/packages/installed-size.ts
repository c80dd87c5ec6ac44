import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of one package's files under `dir`, not of packages nested in its node_modules (file sizes, not disk blocks). */
export async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && !path.slice(dir.length).includes('/node_modules/'))
      total += (await stat(path)).size;
  }
  return total;
}

/**
 * What installing `name` into a project puts in its node_modules: the package and, transitively,
 * its dependencies (peers excluded: the user's app brings them), with their sizes.
 */
export async function installedClosure(
  nodeModules: string,
  name: string,
): Promise<{ packages: string[]; bytes: number }> {
  const seen = new Set<string>();
  const visit = async (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      // Node's resolution from dir: nested node_modules first, then the project's.
      const nested = join(dir, 'node_modules', dependency);
      const found = await stat(nested).then(
        () => nested,
        () => join(nodeModules, dependency),
      );
      await visit(found);
    }
  };
  await visit(join(nodeModules, name));
  const dirs = [...seen];
  let bytes = 0;
  for (const dir of dirs) bytes += await bytesUnder(dir);
  return { packages: dirs.map((dir) => dir.slice(nodeModules.length + 1)).sort(), bytes };
}
