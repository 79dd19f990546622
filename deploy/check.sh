#!/usr/bin/env bash
# ./deploy/check.sh — the static checks deploy/test.sh runs before the tests (needs node_modules
# and a build: ./deploy/install.sh first, or as `./deploy/install.sh ./deploy/check.sh`):
# generated proto types current, tests and benchmarks type-checked, lint, layering rules.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

# The checked-in types of the core's proto must be what the proto generates (deploy/gen-proto.sh).
GEN=$(mktemp -d -t quarry-gen.XXXXXX)
./deploy/gen-proto.sh "$GEN/generated"
diff -r "$GEN/generated" core/rpc/generated >/dev/null || { rm -rf "$GEN"; echo "check.sh: core/rpc/generated differs from proto/ (run ./deploy/gen-proto.sh)" >&2; exit 1; }
rm -rf "$GEN"
# The tests and benchmarks are type-checked too (the build covers only what runs in production),
# beside the type-aware lint (eslint.config.js: floating and misused promises, unused code): both
# are single-threaded, and side by side they take ~50 s here instead of ~75.
TSC_LOG=$(mktemp -t quarry-tsc.XXXXXX)
npx --no -- tsc -p tsconfig.test.json > "$TSC_LOG" 2>&1 &
TSC_PID=$!
lint_ok=1
npx --no -- eslint --max-warnings 0 . || lint_ok=0
tsc_ok=1
wait "$TSC_PID" || tsc_ok=0
cat "$TSC_LOG"
rm -f "$TSC_LOG"
[ "$tsc_ok" = 1 ] || { echo "check.sh: type errors (tsc -p tsconfig.test.json)" >&2; exit 1; }
[ "$lint_ok" = 1 ] || { echo "check.sh: lint errors (npx eslint .)" >&2; exit 1; }
# The layering rules of ARCHITECTURE.md (.dependency-cruiser.cjs: no import cycles, core/domain and
# the shard threads import nothing of the services, the store calls no service).
npx --no -- depcruise core store facade workers deploy --config .dependency-cruiser.cjs || { echo "check.sh: layering violations (npx depcruise)" >&2; exit 1; }
