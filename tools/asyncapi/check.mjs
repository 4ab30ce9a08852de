// Checks schemas/asyncapi.yaml: parses it with @asyncapi/parser (resolving the
// relative $refs to the JSON Schema files) and fails on any diagnostic of error
// severity; then checks it against the schema files and the poller's parameters:
// one message, channel and send operation per data/<type>.v<N>.json, each payload
// made of envelope.json and that file (the message and channel of version 1 are named
// <type>, those of a later version N, published beside it, <type>.v<N>), the headers of headers.json, the stream
// settings against config/iparams.json, and every schema file within the subset of
// JSON Schema that both draft 2020-12 (Go) and draft-07 (the parser) read alike.
//
// Usage: node tools/asyncapi/check.mjs [path/to/asyncapi.yaml]
// Exit status: 0 when clean, non-zero on any problem.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser, fromFile } from '@asyncapi/parser';
import yaml from 'js-yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docPath = resolve(process.argv[2] ?? join(root, 'schemas/asyncapi.yaml'));
const schemaDir = dirname(docPath);
const problems = [];
const problem = (msg) => problems.push(msg);

const severity = ['error', 'warning', 'info', 'hint'];
const parser = new Parser();
const { document, diagnostics } = await fromFile(parser, docPath).parse();
for (const d of diagnostics) {
  const line = `${severity[d.severity] ?? d.severity} ${d.code} at /${(d.path ?? []).join('/')}: ${d.message}`;
  if (d.severity === 0) problem(`parser: ${line}`);
  else console.log(`note: ${line}`);
}
if (!document) problem('parser: no document (see the errors above)');

const raw = yaml.load(readFileSync(docPath, 'utf8'));
// dataFile maps each message name to its schema file: data/<type>.v1.json is the
// message <type>, data/<type>.v<N>.json (N > 1) the message <type>.v<N>.
const dataFile = new Map();
for (const f of readdirSync(join(schemaDir, 'data')).filter((f) => f.endsWith('.json'))) {
  const m = /^(.+)\.v([1-9][0-9]*)\.json$/.exec(f);
  if (!m) {
    problem(`data/${f}: not named <type>.v<N>.json (the version of the type's data schema)`);
    continue;
  }
  dataFile.set(m[2] === '1' ? m[1] : `${m[1]}.v${m[2]}`, f);
}
const types = [...dataFile.keys()].sort();
if (types.length === 0) problem(`no schemas in ${join(schemaDir, 'data')}`);

// fileRefs lists the $ref values of v that point into files.
function fileRefs(v, out = []) {
  if (Array.isArray(v)) v.forEach((x) => fileRefs(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && !x.startsWith('#')) out.push(x);
      else fileRefs(x, out);
    }
  }
  return out;
}

// local resolves a '#/a/b' reference inside the raw document.
function local(ref) {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined;
  return ref.slice(2).split('/').reduce((o, k) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], raw);
}

function readJSON(path, what) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    problem(`${what}: ${relative(root, path)}: ${err.message}`);
    return undefined;
  }
}

// Messages: one per type, each payload = envelope.json + data/<type>.json.
const messages = raw?.components?.messages ?? {};
const msgByType = new Map();
for (const [id, m] of Object.entries(messages)) {
  const at = `components/messages/${id}`;
  if (!types.includes(m.name)) {
    problem(`${at}: name ${JSON.stringify(m.name)} is not an event type with a schema in data/`);
    continue;
  }
  if (msgByType.has(m.name)) problem(`${at}: a second message for ${m.name}`);
  msgByType.set(m.name, id);
  if (m.contentType !== 'application/cloudevents+json') problem(`${at}: contentType ${m.contentType}, want application/cloudevents+json`);
  const refs = fileRefs(m.payload);
  for (const ref of refs) {
    const file = resolve(schemaDir, ref);
    if (!existsSync(file)) problem(`${at}: payload $ref ${ref}: no such file`);
    else readJSON(file, `${at}: payload $ref ${ref}`);
  }
  for (const want of ['./envelope.json', `./data/${dataFile.get(m.name)}`]) {
    if (!refs.includes(want)) problem(`${at}: payload does not $ref ${want}`);
  }
  const headers = m.headers?.$ref?.startsWith('#') ? local(m.headers.$ref) : m.headers;
  const headerFiles = fileRefs(headers ?? {});
  if (!headerFiles.includes('./headers.json')) problem(`${at}: headers do not $ref ./headers.json`);
}
for (const t of types) {
  if (!msgByType.has(t)) problem(`no message for event type ${t} (schemas/data/${dataFile.get(t)})`);
}

// Channels: {prefix}.{account}.<type>, one message each; one send operation each.
const channels = raw?.channels ?? {};
const sent = new Set();
for (const [id, op] of Object.entries(raw?.operations ?? {})) {
  if (op.action !== 'send') problem(`operations/${id}: action ${op.action}, want send`);
  sent.add(op.channel?.$ref);
}
const channelTypes = new Set();
for (const [id, ch] of Object.entries(channels)) {
  const at = `channels/${id}`;
  const msgs = Object.values(ch.messages ?? {}).map((m) => local(m.$ref) ?? m);
  if (msgs.length !== 1) {
    problem(`${at}: ${msgs.length} messages, want 1`);
    continue;
  }
  const type = msgs[0].name;
  channelTypes.add(type);
  if (ch.address !== `{prefix}.{account}.${type}`) problem(`${at}: address ${ch.address}, want {prefix}.{account}.${type}`);
  for (const p of ['prefix', 'account']) {
    if (!ch.parameters?.[p]) problem(`${at}: no parameter ${p}`);
  }
  if (!sent.has(`#/channels/${id}`)) problem(`${at}: no send operation`);
}
for (const t of types) {
  if (!channelTypes.has(t)) problem(`no channel for event type ${t}`);
}

// Servers and the stream, against the poller's parameter defaults.
const servers = Object.entries(raw?.servers ?? {});
if (!servers.some(([, s]) => s.protocol === 'nats')) problem('servers: no server with protocol nats');
const stream = servers.map(([, s]) => s['x-jetstream-stream']).find(Boolean);
const iparams = readJSON(join(root, 'config/iparams.json'), 'config');
if (!stream) problem('servers: no x-jetstream-stream extension');
else if (iparams) {
  const def = (k) => iparams[k]?.default_value;
  const seconds = (s) => {
    const m = /^(\d+)(s|m|h)$/.exec(s ?? '');
    return m ? Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2]] : NaN;
  };
  const want = {
    name: def('stream_name'),
    max_age: Number(def('stream_max_age_hours')) * 3600,
    duplicate_window: Number(def('stream_duplicate_window_seconds')),
    replicas: Number(def('stream_replicas')),
  };
  if (stream.name !== want.name) problem(`x-jetstream-stream: name ${stream.name}, config default ${want.name}`);
  if (seconds(stream.max_age) !== want.max_age) problem(`x-jetstream-stream: max_age ${stream.max_age}, config default ${want.max_age}s`);
  if (seconds(stream.duplicate_window) !== want.duplicate_window) problem(`x-jetstream-stream: duplicate_window ${stream.duplicate_window}, config default ${want.duplicate_window}s`);
  if (stream.replicas !== want.replicas) problem(`x-jetstream-stream: replicas ${stream.replicas}, config default ${want.replicas}`);
  if (stream.storage !== 'file') problem(`x-jetstream-stream: storage ${stream.storage}, want file`);
  if (JSON.stringify(stream.subjects) !== JSON.stringify(['{prefix}.>'])) problem(`x-jetstream-stream: subjects ${JSON.stringify(stream.subjects)}, want ["{prefix}.>"]`);
  const prefix = raw?.components?.parameters?.prefix?.default;
  if (prefix !== def('subject_prefix')) problem(`components/parameters/prefix: default ${prefix}, config default ${def('subject_prefix')}`);
}

// Every schema file: draft 2020-12, written in the subset draft-07 reads alike.
const only2019 = ['$defs', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor', '$vocabulary',
  'prefixItems', 'dependentRequired', 'dependentSchemas', 'unevaluatedItems', 'unevaluatedProperties', 'minContains', 'maxContains'];
const refSiblingsOK = new Set(['$ref', 'description', 'title', '$comment']);
function subset(v, at) {
  if (Array.isArray(v)) return v.forEach((x, i) => subset(x, `${at}/${i}`));
  if (!v || typeof v !== 'object') return;
  for (const k of only2019) if (k in v) problem(`${at}: ${k} is not read by draft-07 tools (the AsyncAPI parser)`);
  if ('$ref' in v) {
    const extra = Object.keys(v).filter((k) => !refSiblingsOK.has(k));
    if (extra.length) problem(`${at}: $ref beside ${extra.join(', ')}: draft-07 ignores them; wrap in allOf`);
  }
  for (const [k, x] of Object.entries(v)) {
    // Inside properties, keys are property names, not keywords.
    if (k === 'properties' && x && typeof x === 'object') {
      for (const [p, s] of Object.entries(x)) subset(s, `${at}/properties/${p}`);
    } else if (k !== 'examples' && k !== 'enum' && k !== 'const') subset(x, `${at}/${k}`);
  }
}
const schemaFiles = ['envelope.json', 'event.json', 'headers.json',
  ...['data', 'defs'].flatMap((d) => readdirSync(join(schemaDir, d)).filter((f) => f.endsWith('.json')).map((f) => `${d}/${f}`))];
for (const f of schemaFiles) {
  const doc = readJSON(join(schemaDir, f), 'schema');
  if (!doc) continue;
  if (doc.$schema !== 'https://json-schema.org/draft/2020-12/schema') problem(`${f}: $schema ${doc.$schema}, want draft 2020-12`);
  subset(doc, f);
}

for (const p of problems) console.error(`asyncapi: ${p}`);
console.log(`asyncapi check of ${relative(root, docPath)}: ${Object.keys(messages).length} messages, ` +
  `${Object.keys(channels).length} channels, ${sent.size} operations, ${schemaFiles.length} schema files, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
