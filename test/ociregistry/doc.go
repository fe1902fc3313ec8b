// Package ociregistry runs a real OCI registry beside a test: the CNCF
// distribution registry that `make registry` builds from the Go module
// proxy, in memory, on a loopback port the system picks, over TLS from a
// CA made for the test. Clients trust that CA through SSL_CERT_FILE (Go's
// own variable for the roots it trusts), so helm runs the commands a user
// types, with only the registry's host changed.
package ociregistry
