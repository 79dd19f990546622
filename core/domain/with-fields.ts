/**
 * Copies of objects with fields added or replaced, for code that runs once per search or per
 * shard task.
 *
 * Why not `{ ...base, field }`: in Node 20 (V8 11.3) an object that a literal makes by spreading
 * first and then adding anything (`{ ...a, b }`, `{ ...a, ...b }`, or `{ ...a }` given a field
 * afterwards) survives the young-generation collections, and so does everything it points to:
 * 10 lines that make and drop such objects in a loop promote ~4 MB per scavenge where a plain
 * literal or `Object.assign` promotes nothing (`--trace-gc-nvp`). On the search path that was
 * most of what each scavenge of the HTTP process copied and promoted (README.md, "2026-11-29
 * night"). Spreading anywhere but first (`{ a, ...b }`) does not do it, nor does a
 * spread alone (`{ ...a }`). The lint forbids the pattern where this matters (eslint.config.js).
 */

/** The type of `{ ...base, ...fields }`, member by member of a union (so a tagged union stays one). */
export type WithFields<T, F> = T extends unknown ? Omit<T, keyof F> & F : never;

/**
 * `{ ...base, ...fields }` (own enumerable fields of both, `fields` winning), made without the
 * spread. For objects of our own: like `Object.assign`, a `__proto__` key in the input would set
 * the copy's prototype instead of being copied, so never pass parsed user JSON.
 */
export function withFields<T extends object, F extends object>(base: T, fields: F): WithFields<T, F> {
  const copy: object = Object.assign({}, base, fields);
  // Object.assign types its result as the intersection, wrong for a field that `fields` replaces.
  return copy as WithFields<T, F>;
}
