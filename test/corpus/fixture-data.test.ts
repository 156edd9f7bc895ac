/**
 * The real samples in test/fixtures/data are the files of ../shared/data, unchanged: where that folder is
 * beside the clone (CI), every copied file must be byte-identical to its original, so that the counts the
 * tests check against the fixtures are the counts of the real files.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { FIXTURE_DATA, SHARED_DATA } from '../helpers.js';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

test('every fixture data file is an unchanged copy of its original in ../shared/data', {
  skip: existsSync(SHARED_DATA) ? false : 'needs ../shared/data beside the clone (CI has it) to compare the fixtures with',
}, () => {
  const copied = files(FIXTURE_DATA).map((f) => relative(FIXTURE_DATA, f)).sort();
  // The fixtures' own notes (the top README.md, and SOURCE.md where the original folder has none) are the only files not copied.
  const notes = copied.filter((f) => f === 'README.md' || (/(^|\/)SOURCE\.md$/.test(f) && !existsSync(join(SHARED_DATA, f))));
  const dataFiles = copied.filter((f) => !notes.includes(f));
  assert.ok(dataFiles.length >= 20, `${dataFiles.length} files compared`);
  const missing = dataFiles.filter((f) => !existsSync(join(SHARED_DATA, f)));
  assert.deepEqual(missing, [], 'fixture files with no original in ../shared/data');
  const changed = dataFiles.filter((f) => !readFileSync(join(FIXTURE_DATA, f)).equals(readFileSync(join(SHARED_DATA, f))));
  assert.deepEqual(changed, [], 'fixture files that differ from ../shared/data');
});
