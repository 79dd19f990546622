// Lint: type-aware rules over the whole tree (sources, tests, benchmarks), run by deploy/test.sh.
import tseslint from 'typescript-eslint';

// A route's reads go through ctx.state.core, bound to its request: the core then stops work for
// a client that went away (facade/middleware/abort-on-close.ts).
const CORE_READS = {
  selector: "MemberExpression[object.type='MemberExpression'][object.property.name='core'][property.name=/^(search|count|scroll|stats)$/]:not([object.object.property.name='state'])",
  message: 'Read through ctx.state.core (cancelled with the request), not services.core.',
};
// Code that runs per search or per shard task: in Node 20 an object a literal makes by spreading
// first and then adding to survives the young-generation collections (core/domain/with-fields.ts).
const SPREAD_FIRST = {
  selector: 'ObjectExpression > SpreadElement:first-child ~ *',
  message: 'A literal that spreads first and then adds fields survives young-generation GC in Node 20: use withFields (core/domain/with-fields.ts), Object.assign, or put the spread last.',
};
// Where SPREAD_FIRST applies in the HTTP layer: the search path.
const FACADE_SEARCH_PATH = ['facade/search/**/*.ts', 'facade/present/**/*.ts', 'facade/routes/search.ts', 'facade/analytics/**/*.ts', 'facade/schemas/search*.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'core/rpc/generated/**', 'eslint.config.js', '.dependency-cruiser.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits or catches loses its error, or crashes the process on rejection.
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise where a boolean or a void callback is expected (if (promise), an async listener).
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // Unused on purpose: a leading underscore (destructuring a field away, an ignored argument).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  { files: ['core/**/*.ts', 'workers/shard/**/*.ts'], rules: { 'no-restricted-syntax': ['error', SPREAD_FIRST] } },
  { files: ['facade/**/*.ts'], rules: { 'no-restricted-syntax': ['error', CORE_READS] } },
  // Later blocks replace a rule's options: the search path gets both.
  { files: FACADE_SEARCH_PATH, rules: { 'no-restricted-syntax': ['error', CORE_READS, SPREAD_FIRST] } },
);
