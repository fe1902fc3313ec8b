#!/usr/bin/env bash
# Installs karpgate for the steps after it, as resolve.sh decided
# (KARPGATE_* variables): the release archive for this runner, downloaded
# unless cached, and checked against the release's checksums.txt (whose
# cosign signature is checked too when cosign is on PATH) on every run, or a
# build from the action's own source. It puts karpgate on PATH.
set -euo pipefail

fail() { echo "::error title=karpgate action::$1"; exit 1; }

bin="$RUNNER_TEMP/karpgate-bin"
mkdir -p "$bin"

if [[ "$KARPGATE_SOURCE" == source ]]; then
  # As `make build` does, from the action's checkout (GITHUB_ACTION_PATH, at
  # the ref the workflow pinned), with the Makefile's toolchain: Karpenter's
  # modules need a newer Go than go.mod's go line; go fetches it from the
  # Go module proxy.
  cd "$GITHUB_ACTION_PATH"
  if [[ -z "${GOTOOLCHAIN:-}" ]]; then
    GOTOOLCHAIN=$(sed -n 's/^export GOTOOLCHAIN := //p' Makefile)
    export GOTOOLCHAIN
  fi
  commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  # The Makefile's build flags (-trimpath, no DWARF), one word each.
  read -r -a go_build_flags <<<"$(sed -n 's/^GO_BUILD_FLAGS := //p' Makefile)"
  [[ ${#go_build_flags[@]} -gt 0 ]] || fail "no GO_BUILD_FLAGS line in $GITHUB_ACTION_PATH/Makefile"
  CGO_ENABLED=0 go build "${go_build_flags[@]}" \
    -ldflags "-s -w -X github.com/karpgate/karpgate/internal/buildinfo.Version=$KARPGATE_VERSION -X github.com/karpgate/karpgate/internal/buildinfo.Commit=$commit" \
    -o "$bin/karpgate" ./cmd/karpgate
  echo "$bin" >> "$GITHUB_PATH"
  "$bin/karpgate" version
  exit 0
fi

url=$KARPGATE_RELEASE_URL
archive=$KARPGATE_ARCHIVE
work=$(mktemp -d "$RUNNER_TEMP/karpgate-download.XXXXXX")
trap 'rm -rf "$work"' EXIT

download() {
  curl --fail --silent --show-error --location --retry 3 --output "$work/$1" "$url/$1" ||
    fail "could not download $url/$1: is $KARPGATE_VERSION a karpgate release? (the input version, or download-url for a mirror)"
}
sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}

download checksums.txt
case "$KARPGATE_VERIFY_SIGNATURE" in
  false) echo "checksums.txt's signature not checked (verify-signature: false)" ;;
  *)
    if command -v cosign >/dev/null; then
      download checksums.txt.sigstore.json
      cosign verify-blob "$work/checksums.txt" --bundle "$work/checksums.txt.sigstore.json" \
        --certificate-identity "$KARPGATE_SIGNER" \
        --certificate-oidc-issuer https://token.actions.githubusercontent.com ||
        fail "checksums.txt of karpgate $KARPGATE_VERSION is not signed by $KARPGATE_SIGNER; nothing was installed"
    elif [[ "$KARPGATE_VERIFY_SIGNATURE" == true ]]; then
      fail "verify-signature is true, but cosign is not on PATH: add sigstore/cosign-installer before this step"
    else
      echo "checksums.txt's signature not checked: cosign is not on PATH (add sigstore/cosign-installer before this step to check it; verify-signature: true requires it)"
    fi
    ;;
esac

want=$(awk -v name="$archive" '$2 == name { print $1 }' "$work/checksums.txt")
if [[ ! "$want" =~ ^[0-9a-f]{64}$ ]]; then
  fail "checksums.txt of karpgate $KARPGATE_VERSION has no sha256 for $archive: this platform is not in the release"
fi

# A cached archive saves the download, not the check.
cached="$KARPGATE_CACHE_DIR/$archive"
if [[ -f "$cached" && "$(sha256 "$cached")" != "$want" ]]; then
  echo "::warning title=karpgate action::the cached $archive does not match checksums.txt; downloading it again"
  rm -f "$cached"
fi
if [[ -f "$cached" ]]; then
  echo "$archive: cached, matches checksums.txt"
else
  download "$archive"
  got=$(sha256 "$work/$archive")
  if [[ "$got" != "$want" ]]; then
    fail "$archive from $url does not match checksums.txt (sha256 $got, checksums.txt says $want): the download is damaged or was tampered with; nothing was installed"
  fi
  echo "$archive: downloaded, matches checksums.txt"
  mkdir -p "$KARPGATE_CACHE_DIR"
  mv "$work/$archive" "$cached"
fi

tar -xzf "$cached" -C "$bin" karpgate
echo "$bin" >> "$GITHUB_PATH"
"$bin/karpgate" version
