import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDataFormat, DATA_FORMAT, DataFormatError } from '../../../infra/local/data-format.ts';

const dirs: string[] = [];
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ackline-format-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('embedded data format', () => {
  it('marks a new data directory with the current format', async () => {
    const dir = await dataDir();
    await checkDataFormat(dir);
    expect((await readFile(join(dir, 'ackline-format'), 'utf8')).trim()).toBe(DATA_FORMAT);
    await expect(checkDataFormat(dir)).resolves.toBeUndefined();
  });

  it('refuses a directory the token engine wrote (data, no format file), saying what to do', async () => {
    const dir = await dataDir();
    await mkdir(join(dir, 'dynamodb'));
    await expect(checkDataFormat(dir)).rejects.toThrow(DataFormatError);
    await expect(checkDataFormat(dir)).rejects.toThrow(/older ackline.*Move it away/);
  });

  it('refuses another format', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'ackline-format'), '3\n');
    await expect(checkDataFormat(dir)).rejects.toThrow(/format 3/);
  });
});
