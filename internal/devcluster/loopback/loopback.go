// Package loopback hands out TCP ports on 127.0.0.1 for servers that must
// be told their port before they listen: webhooks registered with an API
// server, and the tests and local runs that start them.
package loopback

import (
	"net"
	"testing"
)

// FreePorts asks the kernel for n distinct ports free now. Another process
// may take one before the caller binds it; on a test or developer machine
// that window is acceptable.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close() // held until all are chosen, so they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// TestPort is one free port for a test, which fails when none can be had.
func TestPort(t testing.TB) int {
	t.Helper()
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}
