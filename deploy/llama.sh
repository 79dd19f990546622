#!/usr/bin/env bash
# ./deploy/llama.sh install|check|remove — the optional local language model runtime.
#
# install  Installs node-llama-cpp (pinned) with only its prebuilt CPU binary for this platform
#          into <repo>/.llama, where the job workers find it (core/llm/llama-cpp.ts), then checks
#          that the binary loads. Nothing is downloaded but npm packages: node-llama-cpp's
#          postinstall (which may fetch and build llama.cpp from GitHub) never runs, and the
#          CUDA/Vulkan builds (optional dependencies, hundreds of MB) are left out. Idempotent:
#          quiet and quick when the pinned version is already there.
# check    Exits 0 when the installed runtime loads (no download, no build), else 1.
# remove   Deletes <repo>/.llama.
#
# package.json and package-lock.json stay as they are: the runtime is opt-in, and `npm ci` (which
# deletes node_modules) does not remove it. Point the job workers at a GGUF file with
# LLM_MODEL_PATH to use it (README: "RAG providers").
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$REPO"

VERSION=3.22.1
DIR=.llama
die() { echo "llama.sh: $*" >&2; exit 1; }

# The one prebuilt package of this platform without a GPU backend (node-llama-cpp's naming).
binary_package() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo "@node-llama-cpp/linux-x64" ;;
    Linux-aarch64) echo "@node-llama-cpp/linux-arm64" ;;
    Darwin-arm64) echo "@node-llama-cpp/mac-arm64-metal" ;;
    Darwin-x86_64) echo "@node-llama-cpp/mac-x64" ;;
    *) die "no prebuilt node-llama-cpp binary for $(uname -s) $(uname -m)" ;;
  esac
}

# Loads the binary the way the job workers do: CPU only, never build, never download.
check() {
  [ -f "$DIR/node_modules/node-llama-cpp/package.json" ] || return 1
  # A file, not `node -e`: node-llama-cpp tests its binary in a child process that inherits
  # execArgv, and `--input-type` there makes that child fail.
  local tmp rc=0
  tmp=$(mktemp -d)
  cat >"$tmp/check.mjs" <<'EOF_CHECK'
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
const entry = createRequire(process.env.LLAMA_PACKAGE_JSON).resolve('node-llama-cpp');
const { getLlama } = await import(pathToFileURL(entry).href);
const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, progressLogs: false, logLevel: 'error', maxThreads: 1 });
if (llama.buildType !== 'prebuilt') throw new Error('not the prebuilt binary: ' + llama.buildType);
await llama.dispose();
EOF_CHECK
  LLAMA_PACKAGE_JSON="$REPO/$DIR/package.json" NODE_LLAMA_CPP_SKIP_DOWNLOAD=true node "$tmp/check.mjs" </dev/null || rc=$?
  rm -rf "$tmp"
  return "$rc"
}

installed_version() {
  LLAMA_PACKAGE_JSON="$REPO/$DIR/node_modules/node-llama-cpp/package.json" \
    node -p "require(process.env.LLAMA_PACKAGE_JSON).version" 2>/dev/null || true
}

case "${1:-}" in
  install)
    command -v npm >/dev/null 2>&1 || die "npm is not installed"
    pkg=$(binary_package)
    if [ "$(installed_version)" = "$VERSION" ] && [ -d "$DIR/node_modules/$pkg" ] && check 2>/dev/null; then
      exit 0
    fi
    echo "llama.sh: installing node-llama-cpp $VERSION with $pkg into $DIR..." >&2
    tmp=$(mktemp -d "$REPO/.llama-install.XXXXXX")
    log=$(mktemp)
    trap 'rm -rf "$tmp" "$log"' EXIT
    printf '{ "private": true, "dependencies": { "node-llama-cpp": "%s", "%s": "%s" } }\n' "$VERSION" "$pkg" "$VERSION" >"$tmp/package.json"
    # --omit=optional: none of node-llama-cpp's other builds; the CPU one is a direct dependency.
    # --ignore-scripts: its postinstall would download and build llama.cpp when the binary fails.
    if ! NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --prefix "$tmp" --omit=optional --ignore-scripts \
      --no-audit --no-fund --loglevel=error >"$log" 2>&1 </dev/null; then
      tail -n 30 "$log" >&2
      die "npm install failed (output above)"
    fi
    # llama.cpp's source as a git bundle (35 MB), used only to build from source, which the job
    # workers never do (build: 'never').
    rm -f "$tmp/node_modules/node-llama-cpp/llama/gitRelease.bundle"
    # The install ignores itself: no change to the repository's .gitignore.
    printf '*\n' >"$tmp/.gitignore"
    rm -rf "$DIR"
    mv "$tmp" "$DIR"
    check || die "node-llama-cpp $VERSION installed, but its prebuilt binary does not load on this machine"
    echo "llama.sh: node-llama-cpp $VERSION ready in $DIR ($(du -sh "$DIR" | cut -f1))" >&2
    ;;
  check)
    check || die "node-llama-cpp is not installed or does not load (run ./deploy/llama.sh install)"
    ;;
  remove)
    rm -rf "$DIR"
    ;;
  *)
    die "usage: $0 install|check|remove"
    ;;
esac
