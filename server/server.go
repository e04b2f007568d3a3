package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/dpsql/dpsql/fastpath"
	"github.com/dpsql/dpsql/store"
)

// Server is the MySQL wire-protocol front end of an engine.
type Server struct {
	srv *gmsserver.Server
	ln  net.Listener
}

// Options configure New.
type Options struct {
	// TLS, when set, lets clients upgrade to TLS (mariadb --ssl).
	TLS *tls.Config
	// RequireSecureTransport refuses logins over plain connections.
	RequireSecureTransport bool
	// Throttle configures the login brute-force protection; the zero value
	// means DefaultLoginThrottle.
	Throttle LoginThrottle
	// IsOwner reports whether an account is a data owner: owners run ALTER
	// USER … ACCOUNT UNLOCK and CHECK/OPTIMIZE/REPAIR/ANALYZE TABLE
	// (conform.go). Nil: nobody.
	IsOwner func(user string) bool
	// IsProtected reports whether a table is protected (ANALYZE collects
	// no statistics of it).
	IsProtected func(db, table string) bool
	// DPError classifies dpsql's refusals on privacy grounds by message:
	// their MySQL error code and SQLSTATE, 0 for other errors.
	DPError func(msg string) (code int, sqlState string)
}

// LoadTLS reads a PEM certificate (chain) and key for Options.TLS.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// New listens on addr (host:port; port 0 picks a free one) with opt and
// serves e, whose prepared statements and plain INSERTs go through the plan
// cache plans.
func New(e *sqle.Engine, plans *fastpath.PlanCache, addr string, opt Options) (*Server, error) {
	if opt.RequireSecureTransport && opt.TLS == nil {
		return nil, errors.New("--require-secure-transport needs a TLS certificate and key (--tls-cert, --tls-key)")
	}
	if opt.Throttle.MaxFailures <= 0 {
		opt.Throttle = DefaultLoginThrottle
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	t := newThrottle(opt.Throttle)
	cfg := gmsserver.Config{
		Protocol: "tcp", Address: ln.Addr().String(), Listener: ln, MaxConnections: 1000,
		TLSConfig: opt.TLS, RequireSecureTransport: opt.RequireSecureTransport,
		// The listener is go-mysql-server's, with the account checks
		// wrapped (auth.go): throttling, uniform answers, TLS enforcement.
		ProtocolListenerFactory: func(cfg gmsserver.Config, lc mysql.ListenerConfig, sel gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
			lc.AuthServer = newAuthServer(lc.AuthServer, t, opt.RequireSecureTransport)
			return gmsserver.MySQLProtocolListenerFactory(cfg, lc, sel)
		},
	}
	// bi (issue 12): one version string, version_comment 'dpsql', the real port.
	cfg.Version = Version
	if err := setIdentity(ln.Addr().(*net.TCPAddr).Port); err != nil {
		ln.Close()
		return nil, fmt.Errorf("set server identity: %w", err)
	}
	// issue 13: prepared statements re-use their analysed plans (package fastpath).
	// issue 29: MySQL conformance in front of it (conform.go).
	var ch *fastpath.Handler
	sessions := &fastpath.Sessions{}
	conform := &conformHandler{throttle: t, owner: opt.IsOwner, protected: opt.IsProtected, dpError: opt.DPError, started: time.Now()}
	wrap := func(h mysql.Handler) (mysql.Handler, error) {
		if gh, ok := h.(*gmsserver.Handler); ok {
			ch = fastpath.NewHandler(gh, plans, sessions)
			conform.Handler = ch
			return conform, nil
		}
		return h, nil
	}
	build := func(ctx context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
		s, err := sessionBuilder(ctx, conn, addr)
		if err == nil {
			err = applyHandshakeCollation(ctx, s, conn.CharacterSet)
		}
		if err == nil {
			err = applyTLSStatus(ctx, s, conn.Conn)
		}
		if ss, ok := s.(*store.Session); ok && err == nil {
			sessions.Put(conn.ConnectionID, ss)
		}
		if err == nil {
			conform.sessions.Store(conn.ConnectionID, s)
			// go-mysql-server marks a connection ready (its user in the
			// processlist) only when it selects a database; without one
			// an authenticated session stayed 'unauthenticated user'.
			e.ProcessList.ConnectionReady(s)
		}
		return s, err
	}
	srv, err := gmsserver.NewServerWithHandler(cfg, e, sql.NewContext, build, nil, wrap)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start server: %w", err)
	}
	if ch != nil {
		ch.SetSessionManager(srv.SessionManager())
	}
	return &Server{srv: srv, ln: ln}, nil
}

// sessionBuilder records the authenticated user on the session: privilege
// checks and the guard both key on sql.Client.User.
func sessionBuilder(_ context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
	client := sql.Client{Capabilities: conn.Capabilities}
	if u, ok := conn.UserData.(sql.MysqlConnectionUser); ok {
		client.User, client.Address = u.User, u.Host
	}
	return store.NewSession(sql.NewBaseSessionWithClientServer(addr, client, conn.ConnectionID)), nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve accepts connections until Close.
func (s *Server) Serve() error { return s.srv.Start() }

// Close stops accepting connections and closes open ones.
func (s *Server) Close() error { return s.srv.Close() }

// Version is the one version string dpsql advertises: in the handshake,
// VERSION() and @@version.
const Version = "8.0.31-dpsql"

// setIdentity makes @@version, @@version_comment and @@port describe this
// server rather than go-mysql-server's defaults.
func setIdentity(port int) error {
	vals := map[string]any{"version": Version, "version_comment": "dpsql"}
	if port > 0 {
		vals["port"] = port
	}
	return sql.SystemVariables.AssignValues(vals)
}
