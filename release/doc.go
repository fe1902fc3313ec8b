// Package release builds karpgate's release artifacts, reproducibly: the
// same commit gives the same bytes on any machine.
//
// For each platform (linux and darwin, amd64 and arm64) a static binary
// built with buildinfo.GoBuildFlags (-trimpath, no DWARF), -buildvcs=false
// and the version stamped, in a tar.gz whose entries are sorted, owned by
// root and dated at the commit; next to each archive an SPDX 2.3 SBOM of
// what the binary links, read from the module information Go records in it;
// the Helm chart package; the JSON Schema of karpgate.yaml; the krew
// manifest of the kubectl plugin, with each archive's sha256; and
// checksums.txt over all of them, in sha256sum's format.
//
// `make release` runs it (karpgate-dev release). Signing is left to CI,
// which holds the identity: the release workflow
// (.github/workflows/release.yaml) runs `make release` on a v* tag and signs
// checksums.txt with cosign, keyless; docs/ci.md says how to verify it.
package release
