/**
 * A message in the shape a gRPC call gives it, without the bytes: what proto-loader's serialize
 * then deserialize make of a plain object (defaults filled, enums as names, 64-bit integers as
 * numbers, oneofs named, unknown fields dropped, `float` fields rounded to 32 bits), for the
 * in-process core client. Encoding a search's request and reply and decoding them again was
 * ~7-10 us and most of the call's garbage per search here; protobufjs's own `fromObject` and
 * `toObject`, which proto-loader runs around the bytes, give the same object (a property test
 * compares them over every message type, test/unit/wire-shape.test.ts). One difference: a string
 * holding an unpaired surrogate keeps it, where UTF-8 on the wire would replace it.
 */
import protobuf from 'protobufjs';
import { CORE_LOAD_OPTIONS, CORE_PROTO } from './proto.js';

/** A message type's shaping function. */
export type Shaper = (message: unknown) => unknown;

/** Rounds the `float` fields of an already shaped message of a type, in place; null when the type holds none. */
type FloatRounder = ((message: Record<string, unknown>) => void) | null;

/** The core's proto as protobufjs types (the definitions proto-loader loads, field names kept). */
export function loadCoreRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.loadSync(CORE_PROTO, { keepCase: true });
  root.resolveAll();
  return root;
}

/** Whether a message of `type` can hold a `float` field, in itself or in the messages it holds (maps aside). */
function holdsFloat(type: protobuf.Type, visiting = new Set<protobuf.Type>()): boolean {
  if (visiting.has(type)) return false;
  visiting.add(type);
  return type.fieldsArray.some((f) => !f.map && (f.type === 'float' || (f.resolvedType instanceof protobuf.Type && holdsFloat(f.resolvedType, visiting))));
}

/** Builds, per message type, the function that rounds its (and its messages') `float` fields. */
function floatRounders(): (type: protobuf.Type) => FloatRounder {
  const made = new Map<protobuf.Type, FloatRounder>();
  const rounder = (type: protobuf.Type): FloatRounder => {
    if (made.has(type)) return made.get(type)!;
    // Most types hold none (a filter's tree is never walked).
    if (!holdsFloat(type)) {
      made.set(type, null);
      return null;
    }
    // A type under construction reaches itself only through a message field: a placeholder that
    // defers to the finished rounder keeps recursive types finite.
    let finished: FloatRounder = null;
    made.set(type, (m) => finished?.(m));
    const steps: ((m: Record<string, unknown>) => void)[] = [];
    for (const field of type.fieldsArray) {
      const name = field.name;
      // No map of the proto holds floats, directly or in its messages; one that does would fail
      // the property test (it draws every field of every type) until handled here.
      if (field.map) continue;
      if (field.type === 'float') {
        steps.push((m) => {
          const v = m[name];
          if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = Math.fround(v[i] as number);
          else if (typeof v === 'number') m[name] = Math.fround(v);
        });
      } else if (field.resolvedType instanceof protobuf.Type) {
        const inner = rounder(field.resolvedType);
        if (inner === null) continue;
        steps.push((m) => {
          const v = m[name];
          if (v === null || v === undefined) return;
          if (Array.isArray(v)) for (const x of v as Record<string, unknown>[]) inner(x);
          else inner(v as Record<string, unknown>);
        });
      }
    }
    finished = steps.length === 0 ? null : (m) => {
      for (const step of steps) step(m);
    };
    made.set(type, finished);
    return finished;
  };
  return rounder;
}

/** The shaper of every request and reply type of the core's service, by method name. */
export function methodShapers(root: protobuf.Root, service: string): ReadonlyMap<string, { request: Shaper; response: Shaper }> {
  const rounder = floatRounders();
  const shaper = (type: protobuf.Type): Shaper => {
    const round = rounder(type);
    return (message) => {
      const shaped = type.toObject(type.fromObject(message as Record<string, unknown>), CORE_LOAD_OPTIONS);
      round?.(shaped);
      return shaped;
    };
  };
  const out = new Map<string, { request: Shaper; response: Shaper }>();
  for (const method of root.lookupService(service).methodsArray) {
    method.resolve();
    out.set(method.name, { request: shaper(method.resolvedRequestType!), response: shaper(method.resolvedResponseType!) });
  }
  return out;
}
