package main

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/dpsql/dpsql/engine"
)

// rootPasswordDiffers reports whether pw (DPSQL_ROOT_PASSWORD) is set and is
// not the password root has in an existing data directory: the variable is
// read only when the directory is created (by serve or import), so a later
// start with another value keeps the old password (issue 29). Only the
// stored mysql_native_password hash is compared.
func rootPasswordDiffers(e *engine.Engine, pw string) bool {
	if pw == "" || e.GeneratedRootPassword != "" {
		return false
	}
	db := e.SQL.Analyzer.Catalog.MySQLDb
	rd := db.Reader()
	defer rd.Close()
	u := db.GetUser(rd, "root", "%", false)
	if u == nil { // root was dropped or renamed: nothing to compare
		return false
	}
	return u.AuthString != nativePasswordHash(pw)
}

// nativePasswordHash is mysql_native_password's stored form: "*" and the
// upper-case hex of SHA1(SHA1(pw)).
func nativePasswordHash(pw string) string {
	s1 := sha1.Sum([]byte(pw))
	s2 := sha1.Sum(s1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(s2[:]))
}

const rootPasswordWarning = "dpsql: WARNING: DPSQL_ROOT_PASSWORD is not root's password in %s: the variable is used only when the data directory is created, and root keeps the password it was created with (change it with ALTER USER root IDENTIFIED BY '…')\n"
