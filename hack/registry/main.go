// Command registry is the CNCF distribution registry's own command line
// (registry.RootCmd: `registry serve config.yml`), linked with the one
// storage driver the chart tests use, in memory. Upstream's registry command
// links every driver (S3, Azure, GCS and their SDKs, twice the packages to
// compile) that a registry on loopback for one test never needs; the
// registry, its API handlers and its storage are upstream's, unchanged.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
