package syntax

import (
	"strings"
	"sync"
)

// The wire handler rewrites a statement with the clause before go-mysql-
// server parses it and stashes the clause here for the statement's
// connection; the DP planner takes it while planning that statement, and
// the handler drops it when the statement ends. A connection runs one
// statement at a time, so the connection id names the statement.

var stash sync.Map // uint32 connection id → *Rewritten

// Stash records the clause of the statement now running on conn.
func Stash(conn uint32, r *Rewritten) { stash.Store(conn, r) }

// Drop forgets it (the statement ended).
func Drop(conn uint32) { stash.Delete(conn) }

// Stashed returns the clause of the statement running on conn, if any.
func Stashed(conn uint32) (*Rewritten, bool) {
	v, ok := stash.Load(conn)
	if !ok {
		return nil, false
	}
	return v.(*Rewritten), true
}

// Maybe is a cheap filter run on every statement before Has: the clause's
// keyword within the first 4 KiB (leading comments included).
func Maybe(q string) bool {
	if len(q) > 4096 {
		q = q[:4096]
	}
	return strings.Contains(strings.ToLower(q), "differential_privacy")
}
