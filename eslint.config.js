// Lint: type-aware rules over the whole tree (sources, tests, benchmarks), run by deploy/test.sh.
import tseslint from 'typescript-eslint';

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
  {
    files: ['facade/**/*.ts'],
    rules: {
      // A route's reads go through ctx.state.core, bound to its request: the core then stops
      // work for a client that went away (facade/middleware/abort-on-close.ts).
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.type='MemberExpression'][object.property.name='core'][property.name=/^(search|count|scroll|stats)$/]:not([object.object.property.name='state'])",
          message: 'Read through ctx.state.core (cancelled with the request), not services.core.',
        },
      ],
    },
  },
);
