/**
 * Layering rules of ARCHITECTURE.md that hold today, checked by deploy/test.sh
 * (`npx depcruise core store facade workers deploy`). Type-only imports are ignored: they leave
 * no runtime edge (the core may name the shard protocol's types).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A runtime import cycle makes load order decide what is undefined at import time.',
      severity: 'error',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'domain-imports-nothing-of-ours',
      comment: 'core/domain is pure shared code: it imports no other quarry folder.',
      severity: 'error',
      from: { path: '^core/domain/' },
      to: { path: '^(core/(?!domain/)|store/|facade/|workers/|deploy/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'shard-threads-import-only-domain',
      comment: 'Shard threads run index code only: no HTTP, queue, store or core-process code.',
      severity: 'error',
      from: { path: '^workers/shard/' },
      to: { path: '^(core/(?!domain/)|store/|facade/|workers/(?!shard/)|deploy/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-below-the-services',
      comment: 'The store is used by the processes; it never calls them.',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(core/(?!domain/)|facade/|workers/|deploy/)', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
