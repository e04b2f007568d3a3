package server

import (
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// LoginThrottle configures the brute-force protection of logins. After
// MaxFailures consecutive failed logins of one account from one client
// address, that account is locked for that address for BaseLock, doubling
// with every further failure up to MaxLock; after 4×MaxFailures failures of
// any accounts from one address within Window, the address is locked the
// same way. While locked, every login is refused with the same answer as a
// wrong password, whether or not the password is right. A successful login
// resets the account's count for that address.
type LoginThrottle struct {
	MaxFailures int
	BaseLock    time.Duration
	MaxLock     time.Duration
	Window      time.Duration
}

// DefaultLoginThrottle: 5 free attempts, then 1 s, 2 s, 4 s … up to 15 min.
var DefaultLoginThrottle = LoginThrottle{MaxFailures: 5, BaseLock: time.Second, MaxLock: 15 * time.Minute, Window: 15 * time.Minute}

// throttle is the state behind LoginThrottle.
type throttle struct {
	cfg   LoginThrottle
	now   func() time.Time
	mu    sync.Mutex
	users map[string]*failures // user \x00 ip
	ips   map[string]*failures
}

type failures struct {
	n     int
	until time.Time // locked until
	last  time.Time
}

func newThrottle(cfg LoginThrottle) *throttle {
	return &throttle{cfg: cfg, now: time.Now, users: map[string]*failures{}, ips: map[string]*failures{}}
}

func hostOf(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return h
}

// locked reports whether a login of user from ip must be refused unseen.
func (t *throttle) locked(user, ip string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if f := t.users[user+"\x00"+ip]; f != nil && now.Before(f.until) {
		return true
	}
	if f := t.ips[ip]; f != nil && now.Before(f.until) {
		return true
	}
	return false
}

func (t *throttle) lockFor(excess int) time.Duration {
	d := t.cfg.BaseLock
	for i := 0; i < excess && d < t.cfg.MaxLock; i++ {
		d *= 2
	}
	return min(d, t.cfg.MaxLock)
}

// failed records a failed login.
func (t *throttle) failed(user, ip string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.prune(now)
	k := user + "\x00" + ip
	f := t.users[k]
	if f == nil {
		f = &failures{}
		t.users[k] = f
	}
	f.n++
	f.last = now
	if f.n >= t.cfg.MaxFailures {
		f.until = now.Add(t.lockFor(f.n - t.cfg.MaxFailures))
	}
	g := t.ips[ip]
	if g == nil || now.Sub(g.last) > t.cfg.Window {
		g = &failures{}
		t.ips[ip] = g
	}
	g.n++
	g.last = now
	if limit := 4 * t.cfg.MaxFailures; g.n >= limit {
		g.until = now.Add(t.lockFor(g.n - limit))
	}
}

// succeeded resets the account's count for the address (not the address's
// own count: one valid account must not unlock guessing at others).
func (t *throttle) succeeded(user, ip string) {
	t.mu.Lock()
	delete(t.users, user+"\x00"+ip)
	t.mu.Unlock()
}

// prune forgets entries idle for longer than the window and not locked, so
// that the maps stay small under a spray of names.
func (t *throttle) prune(now time.Time) {
	if len(t.users)+len(t.ips) < 4096 {
		return
	}
	for k, f := range t.users {
		if now.Sub(f.last) > t.cfg.Window && now.After(f.until) {
			delete(t.users, k)
		}
	}
	for k, f := range t.ips {
		if now.Sub(f.last) > t.cfg.Window && now.After(f.until) {
			delete(t.ips, k)
		}
	}
}

// accessDenied is the one answer to every failed login: wrong password,
// unknown account, locked account, throttled address, insecure transport.
func accessDenied(user string) error {
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
}

// authServer wraps go-mysql-server's account checks with the throttle, the
// secure-transport requirement, and uniform answers for unknown accounts.
type authServer struct {
	inner   mysql.AuthServer
	methods []mysql.AuthMethod
}

func newAuthServer(inner mysql.AuthServer, t *throttle, requireTLS bool) *authServer {
	a := &authServer{inner: inner}
	in := inner.AuthMethods()
	for i, m := range in {
		a.methods = append(a.methods, &authMethod{AuthMethod: m, all: in, first: i == 0, t: t, requireTLS: requireTLS})
	}
	return a
}

func (a *authServer) AuthMethods() []mysql.AuthMethod { return a.methods }
func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	return a.inner.DefaultAuthMethodDescription()
}

type authMethod struct {
	mysql.AuthMethod
	all        []mysql.AuthMethod
	first      bool // mysql_native_password: also claims unknown accounts
	t          *throttle
	requireTLS bool
}

// HandleUser: go-mysql-server's methods claim only accounts they know, so an
// unknown account used to get a different handshake error ("No
// authentication methods available") than a wrong password. The first
// method now also claims accounts no method knows, and rejects them with
// the same "Access denied" as a wrong password.
func (m *authMethod) HandleUser(c *mysql.Conn, user string) bool {
	if m.AuthMethod.HandleUser(c, user) {
		return true
	}
	if !m.first {
		return false
	}
	for _, o := range m.all {
		if o.HandleUser(c, user) {
			return false
		}
	}
	return true
}

func (m *authMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, remote net.Addr) (mysql.Getter, error) {
	// vitess only writes an error packet for a plain connection when secure
	// transport is required, and carries on; refuse here as well.
	if m.requireTLS && !c.TLSEnabled() {
		return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v': the server requires TLS (--require-secure-transport)", user)
	}
	ip := hostOf(remote)
	if m.t != nil && m.t.locked(user, ip) {
		// Guessing on while locked extends the lock: a locked account
		// stays locked for as long as someone keeps trying.
		m.t.failed(user, ip)
		return nil, accessDenied(user)
	}
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, remote)
	if m.t != nil {
		if err != nil {
			m.t.failed(user, ip)
		} else {
			m.t.succeeded(user, ip)
		}
	}
	if err != nil {
		return nil, accessDenied(user)
	}
	return g, nil
}
