#!/usr/bin/env bash
# Decides what the action installs, from its inputs (KARPGATE_* variables)
# and the runner: a release's archive for this runner's platform, or a build
# from the action's own source. It writes the decision as step outputs for
# the cache steps and install.sh, and checks nothing over the network.
set -euo pipefail

fail() { echo "::error title=karpgate action::$1"; exit 3; }

semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'

case "${KARPGATE_BUILD_FROM_SOURCE:-false}" in
  true) source=source ;;
  false | "") source=release ;;
  *) fail "build-from-source is \"$KARPGATE_BUILD_FROM_SOURCE\"; use true or false" ;;
esac
case "${KARPGATE_VERIFY_SIGNATURE:-auto}" in
  auto | true | false) verify=${KARPGATE_VERIFY_SIGNATURE:-auto} ;;
  *) fail "verify-signature is \"$KARPGATE_VERIFY_SIGNATURE\"; use auto, true or false" ;;
esac

# The release: the version input, by default the ref the workflow pinned
# the action at. A commit or a branch names no release.
version=${KARPGATE_VERSION:-}
if [[ "$source" == source ]]; then
  version=${version:-dev}
elif ! [[ "$version" =~ $semver ]]; then
  fail "version is \"$version\", which names no karpgate release (a tag such as v0.1.0; by default version is the ref in uses: karpgate/karpgate@<ref>): set version to the release your pin is, or build-from-source: \"true\""
fi

# The release archives are built for linux and darwin on amd64 and arm64.
case "${RUNNER_OS:-}" in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  *) os= ;;
esac
case "${RUNNER_ARCH:-}" in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) arch= ;;
esac
if [[ -z "$os" || -z "$arch" ]]; then
  fail "karpgate releases are built for Linux and macOS on X64 and ARM64; this runner is ${RUNNER_OS:-unknown}/${RUNNER_ARCH:-unknown}: run the job on one of those"
fi

base=${KARPGATE_DOWNLOAD_URL:-https://github.com/karpgate/karpgate/releases/download}
{
  echo "source=$source"
  echo "version=$version"
  echo "archive=karpgate_${version}_${os}_${arch}.tar.gz"
  echo "release-url=${base%/}/$version"
  # The tool cache's layout (tool/version/arch), where a self-hosted
  # runner keeps it between jobs and actions/cache restores it.
  echo "cache-dir=${RUNNER_TOOL_CACHE:?}/karpgate/$version/$arch"
  echo "cache-key=karpgate-$version-$os-$arch"
  echo "verify-signature=$verify"
  # Who signs a release: karpgate's release workflow, run for the release's
  # tag (cosign keyless, GitHub's OIDC identity; docs/ci.md).
  echo "signer=https://github.com/karpgate/karpgate/.github/workflows/release.yaml@refs/tags/$version"
} >> "$GITHUB_OUTPUT"
if [[ "$source" == source ]]; then
  echo "karpgate $version for $os/$arch: built from the action's source"
else
  echo "karpgate $version for $os/$arch: the release archive from ${base%/}/$version"
fi
