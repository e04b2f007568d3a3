package engine

import (
	"context"
	"fmt"
	"net"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/dpsql/dpsql/engine/store"
)

// Server is the MySQL wire-protocol front end of an Engine.
type Server struct {
	e   *Engine
	srv *server.Server
	ln  net.Listener
}

// NewServer listens on addr (host:port; port 0 picks a free one).
func (e *Engine) NewServer(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	cfg := server.Config{Protocol: "tcp", Address: ln.Addr().String(), Listener: ln, MaxConnections: 1000}
	srv, err := server.NewServer(cfg, e.SQL, sql.NewContext, sessionBuilder, nil)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start server: %w", err)
	}
	return &Server{e: e, srv: srv, ln: ln}, nil
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
