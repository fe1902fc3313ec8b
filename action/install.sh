#!/usr/bin/env bash
# Builds karpgate from the action's checkout (GITHUB_ACTION_PATH, at the ref
# the workflow pinned) as `make build` does, and puts it on PATH for the
# steps after it.
set -euo pipefail
cd "$GITHUB_ACTION_PATH"
# The toolchain the Makefile builds with (Karpenter's modules need a newer Go
# than go.mod's go line); go fetches it from the Go module proxy.
if [[ -z "${GOTOOLCHAIN:-}" ]]; then
  GOTOOLCHAIN=$(sed -n 's/^export GOTOOLCHAIN := //p' Makefile)
  export GOTOOLCHAIN
fi
bin="$RUNNER_TEMP/karpgate-bin"
mkdir -p "$bin"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/karpgate/karpgate/internal/buildinfo.Version=${KARPGATE_REF:-dev} -X github.com/karpgate/karpgate/internal/buildinfo.Commit=$commit" \
  -o "$bin/karpgate" ./cmd/karpgate
echo "$bin" >> "$GITHUB_PATH"
"$bin/karpgate" version
