// Fails when a public entry point of the packages (an exported class or function) has no
// `@example` in its TSDoc. Reads the JSON that `typedoc --json` writes (npm run docs).
import { readFileSync } from 'node:fs';

const KIND_CLASS = 128;
const KIND_FUNCTION = 64;
const project = JSON.parse(readFileSync(process.argv[2] ?? 'docs/api/api.json', 'utf8'));
const hasExample = (comment) => (comment?.blockTags ?? []).some((tag) => tag.tag === '@example');
const missing = [];
for (const module of project.children ?? []) {
  for (const item of module.children ?? []) {
    if (item.kind !== KIND_CLASS && item.kind !== KIND_FUNCTION) continue;
    const documented = hasExample(item.comment) || (item.signatures ?? []).some((s) => hasExample(s.comment));
    if (!documented) missing.push(`${module.name}: ${item.name}`);
  }
}
if (missing.length > 0) {
  console.error(`Public entry points without an @example:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
console.log('every public class and function has an @example');
