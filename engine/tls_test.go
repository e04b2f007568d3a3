package engine_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key to
// dir and returns their paths and a pool trusting the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dpsql test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSAndSecureTransport(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	tlsCfg, err := server.LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadTLS(certFile, certFile); err == nil {
		t.Fatal("a certificate as key was accepted")
	}
	ts := startServerOpts(t, dir, engine.Options{}, server.Options{TLS: tlsCfg, RequireSecureTransport: true})
	if err := mysql.RegisterTLSConfig("dpsqltest", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	open := func(tlsName string) (*sql.DB, error) {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPW, "tcp", ts.srv.Addr()
		cfg.TLSConfig = tlsName
		cfg.Timeout = 10 * time.Second
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		db := sql.OpenDB(conn)
		t.Cleanup(func() { db.Close() })
		return db, db.Ping()
	}
	db, err := open("dpsqltest")
	if err != nil {
		t.Fatalf("TLS login: %v", err)
	}
	// issue 29 item 7: the session's TLS parameters, as MySQL reports them.
	for name, want := range map[string]string{"Ssl_cipher": "TLS_", "Ssl_version": "TLSv1."} {
		var got string
		if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(new(string), &got); err != nil || !strings.HasPrefix(got, want) {
			t.Errorf("SHOW STATUS LIKE '%s' on a TLS session: %q (%v), want %s…", name, got, err, want)
		}
	}
	mustExec(t, db, "CREATE DATABASE overtls")
	// Plain connections are refused when secure transport is required.
	if _, err := open("false"); err == nil {
		t.Fatal("a plain connection logged in although secure transport is required")
	} else {
		t.Logf("plain connection: %v", err)
	}
	// A client that does not trust the certificate is refused by itself.
	if _, err := open("true"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverified certificate: %v", err)
	}
	// Without the requirement, plain and TLS clients both work.
	ts.stop()
	ts2 := startServerOpts(t, dir, engine.Options{}, server.Options{TLS: tlsCfg})
	plain := connectAddr(t, ts2.srv.Addr(), "root", rootPW, "overtls")
	mustExec(t, plain, "CREATE TABLE t (id INT PRIMARY KEY)")
	if _, err := ts2.e.NewServerWithOptions("127.0.0.1:0", server.Options{RequireSecureTransport: true}); err == nil {
		t.Fatal("secure transport required without a certificate was accepted")
	}
}
