package engine_test

import (
	"strings"
	"testing"

	"github.com/dpsql/dpsql/engine"
)

// TestDisableWALRefusesUncleanLog: after a stop that did not close the log
// (here: the first engine is still open, as after a crash), opening the
// directory with the log off is refused before bbolt opens the file — the
// file may lack acknowledged commits that only the log's replay restores.
// After a clean close the log is empty and -wal=false opens it.
func TestDisableWALRefusesUncleanLog(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog(), DisableWAL: true})
	if err == nil || !strings.Contains(err.Error(), "unclean stop") {
		t.Fatalf("-wal=false on an unclean log: %v, want a refusal naming the unclean stop", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog(), DisableWAL: true})
	if err != nil {
		t.Fatalf("-wal=false after a clean close: %v", err)
	}
	e.Close()
}
