import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * Checks that documents point at what exists: relative Markdown links, and the document paths
 * code cites (`docs/design/delivery-engine.md#items`). Anchors are resolved as GitHub renders
 * them: a heading's slug, or an explicit `<a id="...">` / `<a name="...">`. In-process, no
 * network; cost: one read of each document and code file.
 */

/** A repository as the checker sees it: paths relative to its root, '/'-separated. */
export interface RepoView {
  /** Whether a file or directory exists at `path`. */
  exists(path: string): boolean;
  /** The text of the file at `path` (only asked for paths that exist). */
  read(path: string): string;
}

/** Where a link or citation was found, what it points at, and why that does not resolve. */
export interface BrokenLink {
  readonly at: string;
  readonly target: string;
  readonly reason: string;
}

/** The repository on disk under `root`. */
export function diskRepo(root: string): RepoView {
  return {
    exists: (path) => existsSync(join(root, path)),
    read: (path) => readFileSync(join(root, path), 'utf8'),
  };
}

/** A repository held in memory (tests of the checker itself). */
export function memoryRepo(files: Readonly<Record<string, string>>): RepoView {
  const paths = Object.keys(files);
  return {
    exists: (path) => {
      const clean = path.replace(/\/+$/, '');
      return clean in files || paths.some((p) => p.startsWith(`${clean}/`));
    },
    read: (path) => files[path] ?? '',
  };
}

/**
 * The anchor GitHub gives a heading: its text without Markdown (links, code marks, inline HTML),
 * lower-cased, every character but letters, digits, marks, '_', '-' and spaces dropped, spaces
 * turned into '-' (github-slugger's rule).
 */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

interface Line {
  readonly number: number;
  readonly text: string;
}

/** The lines of a Markdown document outside fenced code blocks, inline code spans removed. */
function proseLines(markdown: string): Line[] {
  const lines: Line[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text);
    if (fence === undefined && opening) {
      fence = opening[1];
      return;
    }
    if (fence !== undefined) {
      if (text.trim().startsWith(fence as string)) fence = undefined;
      return;
    }
    lines.push({ number: index + 1, text: text.replace(/`+[^`]*`+/g, '``') });
  });
  return lines;
}

/** Every anchor a Markdown document offers: heading slugs (repeats numbered -1, -2, ...) and `<a id|name>`. */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const text of markdown.split('\n')) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text);
    if (fence === undefined && opening) {
      fence = opening[1];
      continue;
    }
    if (fence !== undefined) {
      if (text.trim().startsWith(fence as string)) fence = undefined;
      continue;
    }
    for (const match of text.matchAll(/<a\s+(?:id|name)\s*=\s*["']([^"']+)["']/gi)) {
      anchors.add(match[1] as string);
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = githubSlug(heading[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative link targets of a Markdown document (inline and reference definitions), with their lines. */
export function markdownLinks(markdown: string): { readonly line: number; readonly target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const { number, text } of proseLines(markdown)) {
    const inline = text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^)]*["'])?\s*\)/g);
    const reference = text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/g);
    for (const match of [...inline, ...reference]) {
      const target = match[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      links.push({ line: number, target });
    }
  }
  return links;
}

/**
 * The document paths cited in a code file, with their lines: `docs/....md[#anchor]` and
 * `README.md[#anchor]` (the root README; a path such as `packages/x/README.md` is not it).
 */
export function codeCitations(code: string): { readonly line: number; readonly target: string }[] {
  const citations: { line: number; target: string }[] = [];
  code.split('\n').forEach((text, index) => {
    const pattern = /(?<![\w./-])((?:docs\/[\w./-]*?[\w-]|README)\.md(?:#[\w-]+)?)/g;
    for (const match of text.matchAll(pattern))
      citations.push({ line: index + 1, target: match[1] as string });
  });
  return citations;
}

/** Why `target` (a path with an optional #anchor, relative to `fromDir`) does not resolve, or undefined. */
export function unresolved(
  repo: RepoView,
  fromDir: string,
  target: string,
  self: string,
): string | undefined {
  const hash = target.indexOf('#');
  const rawPath = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const path = rawPath === '' ? self : posix.normalize(posix.join(fromDir, decodeURIComponent(rawPath)));
  if (path.startsWith('..')) return 'points outside the repository';
  if (!repo.exists(path)) return `no file ${path}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!path.endsWith('.md')) return `an anchor into ${path}, which is not Markdown`;
  return markdownAnchors(repo.read(path)).has(anchor) ? undefined : `no anchor #${anchor} in ${path}`;
}

/** Every relative link of the Markdown documents at `paths` that does not resolve. */
export function brokenMarkdownLinks(repo: RepoView, paths: readonly string[]): BrokenLink[] {
  return paths.flatMap((path) =>
    markdownLinks(repo.read(path)).flatMap(({ line, target }) => {
      const reason = unresolved(repo, posix.dirname(path), target, path);
      return reason === undefined ? [] : [{ at: `${path}:${line}`, target, reason }];
    }),
  );
}

/** Every document citation in the code files at `paths` that does not resolve (paths from the root). */
export function brokenCodeCitations(repo: RepoView, paths: readonly string[]): BrokenLink[] {
  return paths.flatMap((path) =>
    codeCitations(repo.read(path)).flatMap(({ line, target }) => {
      const reason = unresolved(repo, '.', target, path);
      return reason === undefined ? [] : [{ at: `${path}:${line}`, target, reason }];
    }),
  );
}

/** Directories no scan enters: dependencies and build output. */
const NEVER_SCANNED = new Set(['node_modules', 'dist', 'cdk.out', '.ackline']);

/**
 * Files under `dir` (relative to `root`) whose names end with one of `suffixes`; `excluded` are
 * paths (from the root) not entered.
 */
export function listFiles(
  root: string,
  dir: string,
  suffixes: readonly string[],
  excluded: readonly string[] = [],
): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      return NEVER_SCANNED.has(entry.name) || excluded.includes(path)
        ? []
        : listFiles(root, path, suffixes, excluded);
    }
    return suffixes.some((suffix) => entry.name.endsWith(suffix)) ? [path] : [];
  });
}
