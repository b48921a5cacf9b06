/**
 * Regenerates `src/wire/schema.generated.ts` (static protobuf encoders and
 * decoders) from the schema source of truth `src/wire/multipath.proto`.
 *
 *   node --import tsx tools/gen-wire.ts          # write the file
 *   node --import tsx tools/gen-wire.ts --check  # exit 1 if it is stale
 *
 * The generated module is plain TypeScript over the small wire primitives of
 * `src/wire/pb.ts`: one `encodeX` / `decodeX` per message, the Packet field
 * numbers, and the enums. Nothing is built at run time (protobufjs' reflection
 * compiles its codecs with `new Function`, which a page under
 * `Content-Security-Policy: script-src 'self'` refuses), and protobufjs is
 * only a build-time dependency: it parses the .proto here.
 *
 * Generated semantics (proto3): scalars equal to their default (0, false,
 * empty bytes/string, empty list) are not written; repeated scalars are
 * written packed and read packed or not; decoded messages have every field
 * (defaults filled in); a known field with the wrong wire type throws
 * `PbError` (a 'malformed' drop), an unknown field is skipped. The `Packet`
 * envelope is written and read by hand (encode.ts / decode.ts), so only its
 * field numbers are generated.
 *
 * A unit test (tests/unit/wire/schema.test.ts) calls
 * {@link generateWireSchemaSource} and compares with the committed file so
 * the two cannot drift; `.ci/run` runs `--check` too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { type CliValues, runCli } from './cli.js';

const here = dirname(fileURLToPath(import.meta.url));
export const PROTO_PATH = resolve(here, '../src/wire/multipath.proto');
export const GENERATED_PATH = resolve(here, '../src/wire/schema.generated.ts');

/** The message whose envelope encode.ts / decode.ts handle by hand: only its field numbers are generated. */
const ENVELOPE = 'Packet';

type Kind = 'uint32' | 'uint64' | 'sint32' | 'bool' | 'bytes' | 'string' | 'enum' | 'message';

interface FieldInfo {
  name: string;
  id: number;
  kind: Kind;
  repeated: boolean;
  /** Message type name for kind 'message'. */
  typeName?: string;
}

function fieldKind(f: protobuf.Field): Kind {
  f.resolve();
  if (f.resolvedType instanceof protobuf.Enum) return 'enum';
  if (f.resolvedType instanceof protobuf.Type) return 'message';
  switch (f.type) {
    case 'uint32':
    case 'uint64':
    case 'sint32':
    case 'bool':
    case 'bytes':
    case 'string':
      return f.type;
    default:
      throw new Error(`multipath.proto: ${f.parent?.name}.${f.name}: type ${f.type} is not supported by tools/gen-wire.ts`);
  }
}

function fieldsOf(t: protobuf.Type): FieldInfo[] {
  return t.fieldsArray
    .map((f) => {
      const kind = fieldKind(f);
      return { name: f.name, id: f.id, kind, repeated: f.repeated, ...(kind === 'message' ? { typeName: (f.resolvedType as protobuf.Type).name } : {}) };
    })
    .sort((a, b) => a.id - b.id);
}

/** Bytes the size hint of an encoder leaves for the scalar fields and keys (Media's 13 fields need about 50). */
const SCALAR_ROOM_BYTES = 64;

const TS_TYPE: Record<Exclude<Kind, 'message'>, string> = { uint32: 'number', uint64: 'number', sint32: 'number', bool: 'boolean', bytes: 'Uint8Array', string: 'string', enum: 'number' };
const WIRE_TYPE: Record<Kind, number> = { uint32: 0, uint64: 0, sint32: 0, bool: 0, enum: 0, bytes: 2, string: 2, message: 2 };
const READ: Record<Exclude<Kind, 'message'>, string> = { uint32: 'uint32', uint64: 'uint64', sint32: 'sint32', bool: 'bool', bytes: 'bytes', string: 'string', enum: 'int32' };
const WRITE: Record<Exclude<Kind, 'message'>, string> = { uint32: 'varint', uint64: 'varint', sint32: 'sint32', bool: 'varint', bytes: 'bytes', string: 'string', enum: 'int32' };
const DEFAULT: Record<Exclude<Kind, 'message'>, string> = { uint32: '0', uint64: '0', sint32: '0', bool: 'false', bytes: 'EMPTY', string: "''", enum: '0' };

function tsType(f: FieldInfo): string {
  const one = f.kind === 'message' ? `${f.typeName}Pb` : TS_TYPE[f.kind];
  return f.repeated ? `${one}[]` : one;
}

function messageSource(t: protobuf.Type): string {
  const name = t.name;
  const fields = fieldsOf(t);
  const out: string[] = [];
  out.push(`/** \`${name}\` as decoded: every field present (proto3 defaults filled in). */`);
  out.push(`export interface ${name}Pb {`);
  for (const f of fields) out.push(`  ${f.name}: ${tsType(f)};`);
  out.push('}');
  out.push('');
  // Encoder input: every field optional (absent or default = not written).
  out.push(`/** \`${name}\` to encode: absent fields and fields at their default are not written. */`);
  out.push(`export type ${name}PbInput = {`);
  for (const f of fields) {
    const one = f.kind === 'message' ? `${f.typeName}PbInput` : TS_TYPE[f.kind];
    out.push(`  ${f.name}?: ${f.repeated ? `readonly ${one}[]` : one} | undefined;`);
  }
  out.push('};');
  out.push('');
  out.push(`/** Encodes a \`${name}\` message (the caller validates values first). */`);
  out.push(`export function encode${name}(m: ${name}PbInput): Uint8Array {`);
  // Size hint: the scalars' room plus every bytes / string field, so the writer allocates once.
  const sized = fields.filter((f) => !f.repeated && (f.kind === 'bytes' || f.kind === 'string'));
  const hint = sized.map((f) => `(m.${f.name}?.length ?? 0)${f.kind === 'string' ? ' * 3' : ''}`);
  out.push(hint.length ? `  const w = new PbWriter(${SCALAR_ROOM_BYTES} + ${hint.join(' + ')});` : '  const w = new PbWriter();');
  for (const f of fields) {
    const v = `m.${f.name}`;
    if (f.repeated && f.kind === 'message') {
      out.push(`  if (${v}) for (const x of ${v}) {`);
      out.push(`    w.tag(${f.id}, 2);`);
      out.push(`    w.bytes(encode${f.typeName}(x));`);
      out.push('  }');
    } else if (f.repeated && WIRE_TYPE[f.kind] === 0) {
      out.push(`  if (${v} && ${v}.length > 0) {`);
      out.push('    const p = new PbWriter();');
      out.push(`    for (const x of ${v}) p.${WRITE[f.kind as Exclude<Kind, 'message'>]}(${f.kind === 'bool' ? 'x ? 1 : 0' : 'x'});`);
      out.push(`    w.tag(${f.id}, 2);`);
      out.push('    w.bytes(p.finish());');
      out.push('  }');
    } else if (f.repeated) {
      out.push(`  if (${v}) for (const x of ${v}) {`);
      out.push(`    w.tag(${f.id}, 2);`);
      out.push(`    w.${WRITE[f.kind as Exclude<Kind, 'message'>]}(x);`);
      out.push('  }');
    } else if (f.kind === 'message') {
      out.push(`  if (${v}) {`);
      out.push(`    w.tag(${f.id}, 2);`);
      out.push(`    w.bytes(encode${f.typeName}(${v}));`);
      out.push('  }');
    } else {
      const cond = f.kind === 'bytes' || f.kind === 'string' ? `${v} && ${v}.length > 0` : f.kind === 'bool' ? `${v}` : `${v} !== undefined && ${v} !== 0`;
      out.push(`  if (${cond}) {`);
      out.push(`    w.tag(${f.id}, ${WIRE_TYPE[f.kind]});`);
      out.push(`    w.${WRITE[f.kind]}(${v}${f.kind === 'bool' ? ' ? 1 : 0' : ''});`);
      out.push('  }');
    }
  }
  out.push('  return w.finish();');
  out.push('}');
  out.push('');
  out.push(`/**`);
  out.push(` * Decodes a \`${name}\` message from \`r\` up to its end.`);
  out.push(' * @throws PbError when malformed (truncated, wrong wire type for a known field, bad UTF-8).');
  out.push(' */');
  out.push(`export function decode${name}(r: PbReader): ${name}Pb {`);
  out.push(`  const m: ${name}Pb = {`);
  for (const f of fields) out.push(`    ${f.name}: ${f.repeated ? '[]' : DEFAULT[f.kind as Exclude<Kind, 'message'>]},`);
  out.push('  };');
  out.push('  while (r.pos < r.end) {');
  out.push('    const t = r.tag();');
  out.push('    switch (Math.floor(t / 8)) {');
  for (const f of fields) {
    const label = `'${name}.${f.name}'`;
    out.push(`      case ${f.id}:`);
    if (f.kind === 'message') {
      out.push(`        r.expect(t, 2, ${label});`);
      out.push(f.repeated ? `        m.${f.name}.push(decode${f.typeName}(r.sub()));` : `        m.${f.name} = decode${f.typeName}(r.sub());`);
    } else if (f.repeated && WIRE_TYPE[f.kind] === 0) {
      const rd = READ[f.kind];
      out.push('        if (t % 8 === 2) {');
      out.push('          const e = r.lenEnd();');
      out.push(`          const p = new PbReader(r.buf, r.pos, e);`);
      out.push(`          while (p.pos < e) m.${f.name}.push(p.${rd}());`);
      out.push('          r.pos = e;');
      out.push('        } else {');
      out.push(`          r.expect(t, 0, ${label});`);
      out.push(`          m.${f.name}.push(r.${rd}());`);
      out.push('        }');
    } else {
      out.push(`        r.expect(t, ${WIRE_TYPE[f.kind]}, ${label});`);
      out.push(f.repeated ? `        m.${f.name}.push(r.${READ[f.kind]}());` : `        m.${f.name} = r.${READ[f.kind]}();`);
    }
    out.push('        break;');
  }
  out.push('      default:');
  out.push('        r.skip(t % 8);');
  out.push('    }');
  out.push('  }');
  out.push('  return m;');
  out.push('}');
  return out.join('\n');
}

/**
 * Parses proto3 text (field names converted to lowerCamelCase) and returns
 * the TypeScript source of `schema.generated.ts`.
 * Pure function of its input: deterministic output.
 * @throws Error for a field type the generator does not support.
 */
export function generateWireSchemaSource(protoText: string): string {
  const parsed = protobuf.parse(protoText, { keepCase: false });
  const root = parsed.root;
  root.resolveAll();
  const pkg = parsed.package ?? '';
  const ns = pkg ? root.lookup(pkg) : root;
  if (!(ns instanceof protobuf.Namespace)) throw new Error(`multipath.proto: package ${pkg} not found`);
  const types = ns.nestedArray.filter((x): x is protobuf.Type => x instanceof protobuf.Type);
  const enums = ns.nestedArray.filter((x): x is protobuf.Enum => x instanceof protobuf.Enum);
  const envelope = types.find((t) => t.name === ENVELOPE);
  if (!envelope) throw new Error(`multipath.proto: message ${ENVELOPE} missing`);
  const parts: string[] = [
    '// GENERATED by tools/gen-wire.ts from src/wire/multipath.proto. Do not edit.',
    '// Regenerate: npm run gen:wire',
    "import { PbReader, PbWriter } from './pb.js';",
    '',
    'const EMPTY = new Uint8Array(0);',
    '',
    `/** Protobuf package of the schema. */`,
    `export const WIRE_PACKAGE = ${JSON.stringify(pkg)};`,
    '',
  ];
  for (const e of enums) {
    parts.push(`/** enum \`${e.name}\` values. */`);
    parts.push(`export const ${e.name}Values = ${JSON.stringify(e.values)} as const;`);
    parts.push('');
  }
  const env = envelope.fieldsArray.slice().sort((a, b) => a.id - b.id);
  parts.push(`/** \`${ENVELOPE}\` field numbers (the envelope is written by hand: encode.ts, decode.ts). */`);
  parts.push(`export const ${ENVELOPE.toUpperCase()}_FIELD_NUMBERS = {`);
  for (const f of env) parts.push(`  ${f.name}: ${f.id},`);
  parts.push('} as const;');
  parts.push('');
  parts.push(`/** \`${ENVELOPE}\` field names by number, with their protobuf type ('oneof' bodies are message types). */`);
  parts.push(`export const ${ENVELOPE.toUpperCase()}_FIELDS_BY_NUMBER: Readonly<Record<number, { name: string; type: string }>> = {`);
  for (const f of env) parts.push(`  ${f.id}: { name: ${JSON.stringify(f.name)}, type: ${JSON.stringify(f.type)} },`);
  parts.push('};');
  for (const t of types) {
    if (t.name === ENVELOPE) continue;
    parts.push('');
    parts.push(messageSource(t));
  }
  parts.push('');
  return parts.join('\n');
}

function main(values: CliValues<typeof OPTIONS>): number {
  const source = generateWireSchemaSource(readFileSync(PROTO_PATH, 'utf8'));
  if (values.check) {
    let current = '';
    try {
      current = readFileSync(GENERATED_PATH, 'utf8');
    } catch {
      /* missing file counts as stale */
    }
    if (current !== source) {
      console.error(`${GENERATED_PATH} is stale: run npm run gen:wire`);
      return 1;
    }
    console.log('schema.generated.ts is up to date');
    return 0;
  }
  writeFileSync(GENERATED_PATH, source);
  console.log(`wrote ${GENERATED_PATH}`);
  return 0;
}

const USAGE = 'usage: npm run gen:wire [-- --check]   (--check: exit 1 when src/wire/schema.generated.ts is stale, write nothing)';
const OPTIONS = { check: { type: 'boolean', default: false } } as const;

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) runCli(OPTIONS, USAGE, 'gen:wire', main);
