package main

import (
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
)

// TestRootPasswordDiffers: a data directory created with one root password
// and opened again with another (or by import with none) is reported; the
// same password, or none given, is not.
func TestRootPasswordDiffers(t *testing.T) {
	open := func(dir, pw string) *engine.Engine {
		t.Helper()
		log := logrus.New()
		log.SetLevel(logrus.WarnLevel)
		e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: pw, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	dir := t.TempDir()
	e := open(dir, "first-pw")
	if rootPasswordDiffers(e, "first-pw") {
		t.Error("the creating password reported as different")
	}
	e.Close()
	for pw, want := range map[string]bool{"first-pw": false, "other-pw": true, "": false} {
		e := open(dir, pw)
		if got := rootPasswordDiffers(e, pw); got != want {
			t.Errorf("reopened with %q: differs = %v, want %v", pw, got, want)
		}
		e.Close()
	}
	// import without the variable generates a password; serve with one differs.
	dir = t.TempDir()
	e = open(dir, "")
	if e.GeneratedRootPassword == "" {
		t.Fatal("no generated password")
	}
	gen := e.GeneratedRootPassword
	e.Close()
	e = open(dir, "set-later")
	defer e.Close()
	if !rootPasswordDiffers(e, "set-later") || rootPasswordDiffers(e, gen) {
		t.Error("a generated password vs DPSQL_ROOT_PASSWORD set later not told apart")
	}
}
