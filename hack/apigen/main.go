// Command apigen generates what karpgate's API types imply, with
// controller-tools (controller-gen's library): the deepcopy functions of
// api/karpgate/v1alpha1 and the CRD YAML in api/karpgate/crds, which the
// crds package embeds and install/ turns into the manifests. Run it from
// the repository root with `make generate`; a test fails when the
// checked-in files differ from what it generates.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	files, err := Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.FromSlash(p), files[p], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "apigen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p)
	}
}
