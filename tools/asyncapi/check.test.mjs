// Runs check.mjs on broken copies of schemas/ to make sure it fails on each kind of
// problem. Run: node --test tools/asyncapi/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const schemas = resolve(here, '../../schemas');

// check copies schemas/, lets edit change the copy, runs check.mjs on it.
function check(edit) {
  const dir = mkdtempSync(join(tmpdir(), 'asyncapi-check-'));
  try {
    cpSync(schemas, dir, { recursive: true, filter: (src) => !src.endsWith('.go') });
    edit?.(dir);
    const r = spawnSync(process.execPath, [join(here, 'check.mjs'), join(dir, 'asyncapi.yaml')], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function replace(dir, file, from, to) {
  const p = join(dir, file);
  const s = readFileSync(p, 'utf8');
  assert.ok(s.includes(from), `${file} should contain ${from}`);
  writeFileSync(p, s.replace(from, to));
}

test('the committed document passes', () => {
  const r = check();
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /17 messages, 17 channels, 17 operations/);
});

const broken = [
  ['an invalid schema file', (d) => replace(d, 'defs/csat.json', '"type": "integer"', '"type": "integr"'), /parser: error/],
  ['a missing schema file', (d) => replace(d, 'asyncapi.yaml', "$ref: './data/team.updated.v1.json'", "$ref: './data/team.changed.v1.json'"), /team\.changed\.v1\.json|does not \$ref \.\/data\/team\.updated\.v1\.json/],
  ['a type without a message', (d) => writeFileSync(join(d, 'data/call.deleted.v1.json'), readFileSync(join(d, 'data/call.ended.v1.json'))), /no message for event type call\.deleted/],
  ['a wrong address', (d) => replace(d, 'asyncapi.yaml', "address: '{prefix}.{account}.user.deleted'", "address: '{prefix}.user.deleted'"), /address \{prefix\}\.user\.deleted/],
  ['a stream default off the config', (d) => replace(d, 'asyncapi.yaml', 'duplicate_window: 10m', 'duplicate_window: 2m'), /duplicate_window 2m/],
  ['a 2020-12-only keyword', (d) => replace(d, 'defs/team.json', '"required": ["id"]', '"required": ["id"], "unevaluatedProperties": true'), /unevaluatedProperties is not read/],
];
for (const [name, edit, want] of broken) {
  test(`fails on ${name}`, () => {
    const r = check(edit);
    assert.notEqual(r.status, 0, r.out);
    assert.match(r.out, want);
  });
}
