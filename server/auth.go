package server

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// LoginThrottle configures the brute-force protection of logins (issue 29:
// delay by address, lock by account).
//
//   - Account: after MaxFailures consecutive failed logins of one account
//     from one client address, that account is locked for that address for
//     BaseLock, doubling with every further failure up to MaxLock. A locked
//     login is refused, even with the right password, with its own answer
//     (MySQL's 3955, "Account is locked"); names are locked whether or not
//     they exist, so the answer tells nothing about which accounts exist. A
//     data owner clears the lock with ALTER USER name ACCOUNT UNLOCK; a
//     successful login resets the account's count for that address.
//   - Address: after AddressFailures failed logins of any accounts from one
//     address within Window, every further login from that address waits
//     BaseDelay, doubling with every further failure up to MaxDelay, before
//     it is checked. The address is never locked: a BI server or proxy
//     shares one address for all its users, and names sprayed from it must
//     not lock out the others (root included).
type LoginThrottle struct {
	MaxFailures int
	BaseLock    time.Duration
	MaxLock     time.Duration
	Window      time.Duration
	// Zero values take the defaults: 4×MaxFailures, 100 ms, 2 s.
	AddressFailures int
	BaseDelay       time.Duration
	MaxDelay        time.Duration
}

// DefaultLoginThrottle: 5 free attempts per account and address, then 1 s,
// 2 s, 4 s … up to 15 min; an address with 20 failures in 15 min waits
// 100 ms, 200 ms … up to 2 s per login.
var DefaultLoginThrottle = LoginThrottle{MaxFailures: 5, BaseLock: time.Second, MaxLock: 15 * time.Minute, Window: 15 * time.Minute,
	AddressFailures: 20, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}

// throttle is the state behind LoginThrottle.
type throttle struct {
	cfg   LoginThrottle
	now   func() time.Time
	sleep func(time.Duration)
	mu    sync.Mutex
	users map[string]*failures // user \x00 ip
	ips   map[string]*failures
}

type failures struct {
	n     int
	until time.Time // account: locked until
	last  time.Time
}

func newThrottle(cfg LoginThrottle) *throttle {
	if cfg.AddressFailures <= 0 {
		cfg.AddressFailures = 4 * cfg.MaxFailures
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = 100 * time.Millisecond
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 2 * time.Second
	}
	return &throttle{cfg: cfg, now: time.Now, sleep: time.Sleep, users: map[string]*failures{}, ips: map[string]*failures{}}
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

// lockedFor returns how much longer a login of user from ip is locked (0:
// not locked).
func (t *throttle) lockedFor(user, ip string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.users[user+"\x00"+ip]; f != nil {
		if d := f.until.Sub(t.now()); d > 0 {
			return d
		}
	}
	return 0
}

// delay is how long a login from ip waits before it is checked.
func (t *throttle) delay(ip string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.ips[ip]
	if g == nil || t.now().Sub(g.last) > t.cfg.Window || g.n < t.cfg.AddressFailures {
		return 0
	}
	return doubling(t.cfg.BaseDelay, t.cfg.MaxDelay, g.n-t.cfg.AddressFailures)
}

// doubling is base·2^excess, at most limit.
func doubling(base, limit time.Duration, excess int) time.Duration {
	d := base
	for i := 0; i < excess && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
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
		f.until = now.Add(doubling(t.cfg.BaseLock, t.cfg.MaxLock, f.n-t.cfg.MaxFailures))
	}
	g := t.ips[ip]
	if g == nil || now.Sub(g.last) > t.cfg.Window {
		g = &failures{}
		t.ips[ip] = g
	}
	g.n++
	g.last = now
}

// succeeded resets the account's count for the address (not the address's
// own count: one valid account must not speed up guessing at others).
func (t *throttle) succeeded(user, ip string) {
	t.mu.Lock()
	delete(t.users, user+"\x00"+ip)
	t.mu.Unlock()
}

// unlock clears the account's lock and counts from every address (ALTER
// USER … ACCOUNT UNLOCK).
func (t *throttle) unlock(user string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.users {
		if strings.HasPrefix(k, user+"\x00") {
			delete(t.users, k)
		}
	}
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
		if now.Sub(f.last) > t.cfg.Window {
			delete(t.ips, k)
		}
	}
}

// accessDenied is the one answer to every failed login: wrong password,
// unknown account, insecure transport.
func accessDenied(user string) error {
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
}

// erAccountLocked is MySQL's ER_USER_ACCESS_DENIED_FOR_USER_ACCOUNT_BLOCKED_BY_PASSWORD_LOCK.
const erAccountLocked = 3955

// accountLocked is the answer to a login of a locked account: distinct from
// a wrong password (the user learns to wait or ask an owner), the same for
// known and unknown names.
func accountLocked(user string, left time.Duration) error {
	return mysql.NewSQLError(erAccountLocked, mysql.SSUnknownSQLState,
		"Access denied for user '%v'. Account is locked from this address for %s after consecutive failed logins; a data owner can unlock it with ALTER USER %v ACCOUNT UNLOCK",
		user, fmt.Sprint(left.Round(time.Second)), user)
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
	if m.t != nil {
		if d := m.t.delay(ip); d > 0 {
			m.t.sleep(d)
		}
		if left := m.t.lockedFor(user, ip); left > 0 {
			// Guessing on while locked extends the lock: a locked account
			// stays locked for as long as someone keeps trying.
			m.t.failed(user, ip)
			return nil, accountLocked(user, left)
		}
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
