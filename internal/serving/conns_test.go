package serving

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"

	"github.com/karpgate/karpgate/test/wait"
)

// rawClient is one keep-alive connection that sends a request when asked.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr, src string) *rawClient {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{conn: c, r: bufio.NewReader(c)}
}

// get sends a request on the connection and reads the answer; an error
// means the server closed the connection.
func (c *rawClient) get() error {
	if _, err := io.WriteString(c.conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func TestListenerMakesRoomByClosingTheOldestIdleConnection(t *testing.T) {
	var mu sync.Mutex
	closed := map[string]int{}
	l, err := Listen("test", "127.0.0.1:0", ConnLimits{Max: 3, PerSource: 2, OnClosed: func(reason string) {
		mu.Lock()
		closed[reason]++
		mu.Unlock()
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	var busy atomic.Int32
	srv := NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Block") != "" {
			busy.Add(1)
			<-block
		}
	}), logr.Discard())
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { close(block); srv.Close() })
	addr := l.Addr().String()
	reasons := func(reason string) int { mu.Lock(); defer mu.Unlock(); return closed[reason] }
	// The server marks a connection idle after it has written the answer,
	// so a client can read it first: wait for the mark before a step that
	// needs it, or the busy machine decides which connection is "oldest".
	waitIdle := func(what string, n int) {
		t.Helper()
		wait.For(t, what, func() bool { return l.Idle() == n })
	}

	a, b := dial(t, addr, "127.0.0.2"), dial(t, addr, "127.0.0.2")
	for i, c := range []*rawClient{a, b} {
		if err := c.get(); err != nil {
			t.Fatal(err)
		}
		waitIdle("a, then b, to be idle", i+1)
	}
	// A third connection from the same address: its oldest idle one, a,
	// makes room.
	c := dial(t, addr, "127.0.0.2")
	if err := c.get(); err != nil {
		t.Fatalf("a new connection past the address's share: %v", err)
	}
	if err := a.get(); err == nil || reasons("idle") != 1 {
		t.Fatalf("the oldest idle connection of the address is still open (%v, %d closed idle)", err, reasons("idle"))
	}
	wait.For(t, "a's close to be counted", func() bool { return l.Open() == 2 })

	// b and c busy: a third from that address finds none idle to close.
	for _, busy := range []*rawClient{b, c} {
		if _, err := io.WriteString(busy.conn, "GET / HTTP/1.1\r\nHost: x\r\nX-Block: 1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, "b and c to be busy", func() bool { return busy.Load() == 2 })
	if err := dial(t, addr, "127.0.0.2").get(); err == nil {
		t.Fatal("a connection past its address's share, none idle, was served")
	}
	wait.For(t, "the refusal to be counted", func() bool { return reasons("source") == 1 })
	// Another address still gets in, up to Max.
	if err := dial(t, addr, "127.0.0.3").get(); err != nil {
		t.Fatalf("another address: %v", err)
	}
	waitIdle("the other address's connection to be idle", 1)
	// Max is reached, b and c busy, the last one idle: a fourth address
	// closes that one.
	if err := dial(t, addr, "127.0.0.4").get(); err != nil || reasons("idle") != 2 {
		t.Fatalf("at Max with one idle connection: %v, %d closed idle", err, reasons("idle"))
	}
}
