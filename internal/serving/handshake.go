package serving

import (
	"crypto/tls"
	"fmt"
)

// verifiesClients says whether a listener with this TLS configuration
// learns who its clients are: it asks for a client certificate and checks
// it against a CA, so a connection that presents one the CA signed is a
// known client (the API server) and one that does not is a stranger.
func verifiesClients(c *tls.Config) bool {
	return c != nil && c.ClientCAs != nil && c.ClientAuth >= tls.VerifyClientCertIfGiven
}

// withHandshakeHook returns base so that each handshake tells the tracker
// whether it verified a client certificate (settle), and fails when the
// tracker has no room for what the connection turned out to be. The hook
// is VerifyConnection, which crypto/tls calls on every server handshake,
// certificate or none, resumed or not; GetConfigForClient gives each
// connection a configuration whose hook knows which trackedConn it is.
//
// In TLS 1.3 VerifyConnection runs before the client proves it holds the
// certificate's key. A client that presents a certificate it does not
// hold fails that proof, and its connection, counted verified for those
// milliseconds, closes with the failed handshake.
func (t *connTracker) withHandshakeHook(base *tls.Config) *tls.Config {
	out := base.Clone()
	out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		conf := base
		if base.GetConfigForClient != nil {
			c, err := base.GetConfigForClient(hello)
			if err != nil {
				return nil, err
			}
			if c != nil {
				conf = c
			}
		}
		tracked, ok := hello.Conn.(*trackedConn)
		if !ok {
			return conf, nil
		}
		perConn := conf.Clone()
		perConn.GetConfigForClient = nil
		verify := conf.VerifyConnection
		perConn.VerifyConnection = func(state tls.ConnectionState) error {
			if verify != nil {
				if err := verify(state); err != nil {
					return err
				}
			}
			if reason := t.settle(tracked, len(state.VerifiedChains) > 0); reason != "" {
				t.closed(reason)
				return fmt.Errorf("no room for another connection from %s (%s); retry once one closes", tracked.source, reason)
			}
			return nil
		}
		return perConn, nil
	}
	return out
}
