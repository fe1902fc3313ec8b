package serving

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/internal/devcluster/localca"
	"github.com/karpgate/karpgate/test/wait"
)

// TestVerifiedConnectionsOutlastStrangers is the connection attack the
// load benchmark measured, over real TLS: with client verification, a
// client with a certificate the CA signed keeps its keep-alive connection
// however many strangers connect, each of which would have closed it (the
// oldest idle connection) before; strangers close each other instead.
func TestVerifiedConnectionsOutlastStrangers(t *testing.T) {
	bundle, err := localca.New([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := tls.X509KeyPair(bundle.CertPEM, bundle.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := bundle.ClientTLS("kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	pool := bundle.CertPool()
	var closed []string
	closedCh := make(chan string, 100)
	l, err := Listen("test", "127.0.0.1:0", ConnLimits{Max: 4, OnClosed: func(reason string) { closedCh <- reason }},
		&tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), logr.Discard())
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })

	connect := func(src string, certs []tls.Certificate) *rawClient {
		t.Helper()
		d := tls.Dialer{NetDialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}},
			Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: certs}}
		c, err := d.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		rc := &rawClient{conn: c, r: bufio.NewReader(c)}
		if err := rc.get(); err != nil {
			t.Fatalf("a first request from %s: %v", src, err)
		}
		return rc
	}
	apiServer := connect("127.0.0.1", []tls.Certificate{clientCert})
	wait.For(t, "the verified connection to be counted idle", func() bool { return l.Known() == 1 && l.Idle() == 1 })
	// Max 4: two unverified connections at most, one per address. Each
	// stranger's served connection is idle at once, so each newcomer past
	// the caps closes a stranger's.
	for i := range 6 {
		src := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}[i%3]
		connect(src, nil)
		wait.For(t, "the stranger's connection to be counted idle", func() bool { return l.Idle() == min(i+2, 3) })
	}
	for len(closedCh) > 0 {
		closed = append(closed, <-closedCh)
	}
	if len(closed) != 4 {
		t.Errorf("the strangers' connections closed to make room: %v, want 4 (six strangers, two slots)", closed)
	}
	if err := apiServer.get(); err != nil {
		t.Fatalf("the verified client's connection was closed for strangers: %v", err)
	}
	if v, open := l.Known(), l.Open(); v != 1 || open != 3 {
		t.Errorf("%d verified of %d open, want 1 of 3", v, open)
	}
}
