// The models decode real stream messages: every body under schemas/examples (a
// run against the simulator: one of every type; examples/reduced: what the relay
// publishes for an oversized event, cut and emptied) through the TypeScript models
// (compiled by tsc --strict, run by node) and the Python models (python3, standard
// library only), each with quicktype's runtime checks. A new type needs only its
// example in schemas/examples.
//
// Usage: node --test tools/models/decode.test.mjs   (make models-test)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const out = mkdtempSync(join(tmpdir(), 'callbus-models-'));
after(() => rmSync(out, { recursive: true, force: true }));

function examples(dir = join(root, 'schemas/examples')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? examples(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : []);
}
const files = examples();
const bodies = files.map((f) => ({ file: relative(root, f), body: readFileSync(f, 'utf8') }));
const emptied = (raw) => typeof raw.callbustruncated === 'string' && raw.callbustruncated.startsWith('=');

// What each model must say of each body: its type, that it is known, and that
// the data was decoded (but for the emptied form).
function check(model, results, types) {
  assert.equal(results.length, bodies.length);
  const seen = new Set();
  results.forEach((r, i) => {
    const raw = JSON.parse(bodies[i].body);
    const at = `${model}: ${bodies[i].file}`;
    assert.equal(r.known, true, `${at}: not known`);
    assert.equal(r.type, raw.type, `${at}: type`);
    assert.equal(r.hasData, !emptied(raw), `${at}: data decoded ${r.hasData}`);
    seen.add(raw.type);
  });
  for (const t of types) assert.ok(seen.has(t), `${model}: no example of ${t} in schemas/examples`);
  assert.ok(bodies.some((b) => emptied(JSON.parse(b.body))), 'no example of the emptied form (callbustruncated "=<bytes>")');
  assert.ok(bodies.some((b) => /^\//.test(JSON.parse(b.body).callbustruncated ?? '')), 'no example of the cut form');
}

// A body the models must refuse: call.id a string.
const bad = (() => {
  const raw = JSON.parse(readFileSync(join(root, 'schemas/examples/call.created.json'), 'utf8'));
  raw.data.call.id = 'x';
  return JSON.stringify(raw);
})();
// A body with properties the models do not know (a later, additive release): decodes.
const extra = (() => {
  const raw = JSON.parse(readFileSync(join(root, 'schemas/examples/call.created.json'), 'utf8'));
  raw.data.call.queue_wait = 3;
  raw.data.added = { any: ['thing'] };
  raw.callbusnew = 'x';
  return JSON.stringify(raw);
})();
// A type the models do not know (a newer release's): known false, not an error.
const unknown = JSON.stringify({ ...JSON.parse(bad), type: 'call.archived', dataschema: 'https://callbus.dev/schemas/data/call.archived.v1.json' });

test('TypeScript models decode every example', () => {
  execFileSync(join(here, 'node_modules/.bin/tsc'), ['--strict', '--target', 'es2022', '--module', 'commonjs', '--outDir', out,
    join(root, 'models/ts/events.ts'), join(root, 'models/ts/dataschemas.ts')], { stdio: 'inherit' });
  const m = createRequire(import.meta.url)(join(out, 'dataschemas.js'));
  const results = bodies.map(({ body }) => {
    const d = m.decode(body);
    return { known: d.known, type: d.event?.type, hasData: d.data !== undefined };
  });
  check('ts', results, m.types);
  assert.throws(() => m.decode(bad), /call|id|Invalid/i);
  assert.equal(m.decode(unknown).known, false);
  assert.equal(m.decode(extra).known, true);
});

test('Python models decode every example', () => {
  const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(root, 'models/python'))})
from callbus_models import decode, TYPES
bodies = json.load(sys.stdin)
out = []
for b in bodies["bodies"]:
    d = decode(b)
    out.append({"known": d.known, "type": d.event.type.value if d.event else None, "hasData": d.data is not None})
try:
    decode(bodies["bad"])
    refused = False
except Exception:
    refused = True
print(json.dumps({"results": out, "types": TYPES, "refused": refused, "unknown": decode(bodies["unknown"]).known, "extra": decode(bodies["extra"]).known}))
`;
  const res = JSON.parse(execFileSync('python3', ['-c', script], {
    input: JSON.stringify({ bodies: bodies.map((b) => b.body), bad, unknown, extra }), maxBuffer: 64 << 20,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  }));
  check('python', res.results, res.types);
  assert.equal(res.refused, true, 'python: a call.id string decoded');
  assert.equal(res.unknown, false);
  assert.equal(res.extra, true, 'python: unknown properties refused');
});
