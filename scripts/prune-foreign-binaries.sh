#!/usr/bin/env bash
# Removes the native libraries of onnxruntime-node built for other platforms than this one from a
# node_modules directory: the npm package ships macOS, Windows and Linux builds for two CPU
# architectures each (about 290 MB), of which a Linux x64 image loads one (45 MB). The image's
# production dependencies stage runs it (Dockerfile); it fails if this platform's build is gone.
#
#   scripts/prune-foreign-binaries.sh NODE_MODULES [PLATFORM ARCH]
#
# PLATFORM and ARCH default to Node's process.platform and process.arch (linux, x64 / arm64).
set -euo pipefail

modules="${1:?usage: prune-foreign-binaries.sh NODE_MODULES [PLATFORM ARCH]}"
platform="${2:-$(node -p process.platform)}"
arch="${3:-$(node -p process.arch)}"
bin="$modules/onnxruntime-node/bin"

[ -d "$bin" ] || { echo "no $bin: nothing to prune" >&2; exit 0; }
for napi in "$bin"/napi-v*; do
  [ -d "$napi" ] || continue
  for system in "$napi"/*; do
    [ -d "$system" ] || continue
    if [ "$(basename "$system")" != "$platform" ]; then
      rm -rf "$system"
      continue
    fi
    for cpu in "$system"/*; do
      [ "$(basename "$cpu")" = "$arch" ] || rm -rf "$cpu"
    done
  done
done

# What onnxruntime-node loads (dist/binding.js: bin/napi-v*/<platform>/<arch>/onnxruntime_binding.node).
if ! compgen -G "$bin/napi-v*/$platform/$arch/onnxruntime_binding.node" >/dev/null; then
  echo "onnxruntime-node has no build for $platform/$arch under $bin" >&2
  exit 1
fi
