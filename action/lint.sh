#!/usr/bin/env bash
# Runs karpgate lint for the action: annotations on standard output
# (--format github) and the SARIF report in KARPGATE_SARIF_FILE, with the
# action's inputs from KARPGATE_* variables. Lists are one item per line.
# It records the exit code and the report's path as step outputs, and exits
# with karpgate's code so the step fails as lint does.
set -uo pipefail

fail_usage() { echo "::error title=karpgate action::$1"; echo "exit-code=3" >> "$GITHUB_OUTPUT"; exit 3; }

sarif=${KARPGATE_SARIF_FILE:-karpgate.sarif}
args=(lint --format github --format "sarif=$sarif")
if [[ -n "${KARPGATE_CONFIG:-}" ]]; then
  args+=(--config "$KARPGATE_CONFIG")
fi
while IFS= read -r policy; do
  [[ -n "$policy" ]] && args+=(--policy "$policy")
done <<< "${KARPGATE_POLICIES:-}"
if [[ -n "${KARPGATE_ENVIRONMENT:-}" ]]; then
  args+=(--environment "$KARPGATE_ENVIRONMENT")
fi
if [[ -n "${KARPGATE_KARPENTER_VERSION:-}" ]]; then
  args+=(--karpenter-version "$KARPGATE_KARPENTER_VERSION")
fi
while IFS= read -r crds; do
  [[ -n "$crds" ]] && args+=(--crds "$crds")
done <<< "${KARPGATE_CRDS:-}"
case "${KARPGATE_FAIL_ON_WARN:-false}" in
  true) args+=(--fail-on-warn) ;;
  false | "") ;;
  *) fail_usage "fail-on-warn is \"$KARPGATE_FAIL_ON_WARN\"; use true or false" ;;
esac
paths=()
while IFS= read -r path; do
  [[ -n "$path" ]] && paths+=("$path")
done <<< "${KARPGATE_PATHS:-.}"
if [[ ${#paths[@]} -eq 0 ]]; then
  fail_usage "paths is empty; list files or folders to check, one per line"
fi

"${KARPGATE:-karpgate}" "${args[@]}" -- "${paths[@]}"
code=$?
{
  echo "exit-code=$code"
  echo "sarif-file=$sarif"
} >> "$GITHUB_OUTPUT"
exit "$code"
