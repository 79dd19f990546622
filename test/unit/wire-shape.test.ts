/**
 * The in-process core client shapes messages without the bytes (`core/rpc/wire-shape.ts`): for
 * random messages of every request and reply type of the core's service, the shaped object must
 * equal what proto-loader's serialize then deserialize give, as a gRPC call would hand it over.
 */
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { CORE_SERVICE_NAME, loadCoreService } from '../../core/rpc/proto.js';
import { loadCoreRoot, methodShapers } from '../../core/rpc/wire-shape.js';

const root = loadCoreRoot();
const shapers = methodShapers(root, CORE_SERVICE_NAME);
const wire = loadCoreService().service;

const SCALARS: Record<string, () => fc.Arbitrary<unknown>> = {
  double: () => fc.double(),
  float: () => fc.double(),
  int32: () => fc.integer(),
  sint32: () => fc.integer(),
  sfixed32: () => fc.integer(),
  uint32: () => fc.nat(),
  fixed32: () => fc.nat(),
  int64: () => fc.maxSafeInteger(),
  sint64: () => fc.maxSafeInteger(),
  sfixed64: () => fc.maxSafeInteger(),
  uint64: () => fc.maxSafeNat(),
  fixed64: () => fc.maxSafeNat(),
  bool: () => fc.boolean(),
  // Well-formed text: an unpaired surrogate is the one documented difference.
  string: () => fc.string({ unit: 'binary', maxLength: 12 }),
};

/** A plain object of `type`: any subset of its fields, at most one member of each oneof, messages to `depth`. */
function messageOf(type: protobuf.Type, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const valueOf = (field: protobuf.Field): fc.Arbitrary<unknown> | null => {
    if (field.resolvedType instanceof protobuf.Enum) return fc.constantFrom(...Object.keys(field.resolvedType.values));
    if (field.resolvedType instanceof protobuf.Type) return depth > 0 ? messageOf(field.resolvedType, depth - 1) : null;
    const scalar = SCALARS[field.type];
    if (!scalar) throw new Error(`no arbitrary for ${field.type}`);
    return scalar();
  };
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of type.fieldsArray) {
    if (field.map) {
      const v = valueOf(field);
      if (v) fields[field.name] = fc.dictionary(fc.string({ maxLength: 6 }), v, { maxKeys: 3 });
    } else if (field.repeated) {
      const v = valueOf(field);
      if (v) fields[field.name] = fc.array(v, { maxLength: 3 });
    } else {
      const v = valueOf(field);
      if (v) fields[field.name] = v;
    }
  }
  const oneofMembers = new Set(type.oneofsArray.flatMap((o) => o.fieldsArray.map((f) => f.name)));
  return fc
    .tuple(fc.record(fields, { requiredKeys: [] }), ...type.oneofsArray.map((o) => fc.constantFrom(null, ...o.fieldsArray.map((f) => f.name))))
    .map(([record, ...chosen]) => {
      const keep = new Set(chosen.filter((c): c is string => c !== null));
      return Object.fromEntries(Object.entries(record).filter(([k]) => !oneofMembers.has(k) || keep.has(k)));
    });
}

describe('wire shape', () => {
  for (const method of root.lookupService(CORE_SERVICE_NAME).methodsArray) {
    it(`${method.name}: request and reply as the wire gives them`, () => {
      const shape = shapers.get(method.name)!;
      const def = wire[method.name]!;
      for (const [type, mine, theirs] of [
        [method.resolvedRequestType!, shape.request, (x: unknown) => def.requestDeserialize(def.requestSerialize(x))],
        [method.resolvedResponseType!, shape.response, (x: unknown) => def.responseDeserialize(def.responseSerialize(x))],
      ] as const) {
        fc.assert(
          fc.property(messageOf(type, 4), (message) => {
            expect(mine(message)).toStrictEqual(theirs(message));
          }),
          { numRuns: 400 },
        );
      }
    });
  }

  it('rounds float fields to 32 bits, as the wire does', () => {
    const shape = shapers.get('Search')!;
    const shaped = shape.request({ dataset_id: 'd', vector: [0.1, 1 / 3] }) as { vector: number[] };
    expect(shaped.vector).toEqual([Math.fround(0.1), Math.fround(1 / 3)]);
    expect(shaped.vector[0]).not.toBe(0.1);
  });
});
