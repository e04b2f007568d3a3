package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Wire-level conformance (issue 29): what go-mysql-server and vitess put
// on the wire differently from MySQL/MariaDB, corrected between the
// handler and the connection. Nothing here looks at more than the result
// metadata and the representation of a value already computed.

// NOT_FIXED_DEC: the decimals MySQL and MariaDB send for a FLOAT or DOUBLE
// without a declared scale; drivers read it as "no scale".
const notFixedDec = 31

// fixFields returns fields as MySQL sends them: non-string types in the
// binary character set (63; BIT is read as bytes only then), FLOAT and
// DOUBLE with decimals 31, YEAR with ZEROFILL. fields is not modified
// (plans cache their field lists); a copy is returned when anything
// changes.
func fixFields(fields []*querypb.Field) []*querypb.Field {
	var out []*querypb.Field
	for i, f := range fields {
		want := fieldFix(f)
		if want == nil {
			continue
		}
		if out == nil {
			out = append([]*querypb.Field(nil), fields...)
		}
		out[i] = want
	}
	if out == nil {
		return fields
	}
	return out
}

// fieldFix returns the corrected copy of f, or nil when f is as MySQL sends it.
func fieldFix(f *querypb.Field) *querypb.Field {
	if f == nil {
		return nil
	}
	charset, decimals, flags := f.Charset, f.Decimals, f.Flags
	numeric := sqltypes.IsIntegral(f.Type) || sqltypes.IsFloat(f.Type) || f.Type == sqltypes.Decimal
	if numeric || f.Type == sqltypes.Bit || f.Type == sqltypes.Year || isDate(f.Type) || f.Type == sqltypes.Time {
		charset = uint32(sql.Collation_binary)
	}
	if sqltypes.IsFloat(f.Type) && decimals == 0 {
		decimals = notFixedDec
	}
	if f.Type == sqltypes.Year {
		flags |= uint32(querypb.MySqlFlag_UNSIGNED_FLAG | querypb.MySqlFlag_ZEROFILL_FLAG)
	}
	if charset == f.Charset && decimals == f.Decimals && flags == f.Flags {
		return nil
	}
	return &querypb.Field{Name: f.Name, Type: f.Type, Table: f.Table, OrgTable: f.OrgTable, Database: f.Database,
		OrgName: f.OrgName, ColumnLength: f.ColumnLength, Charset: charset, Decimals: decimals, Flags: flags}
}

// fixResult corrects a result's metadata (query: the statement, for the
// alias case); binary, for the binary protocol
// (prepared statements), also sends zero dates as MariaDB does.
func fixResult(r *sqltypes.Result, binary bool, query string) *sqltypes.Result {
	if r == nil {
		return r
	}
	fields := restoreAliasCase(fixFields(r.Fields), query)
	var zeroCols []int
	if binary {
		for i, f := range r.Fields {
			if isDate(f.Type) {
				zeroCols = append(zeroCols, i)
			}
		}
	}
	rows, copied := r.Rows, false
	for ri, row := range r.Rows {
		for _, c := range zeroCols {
			if c >= len(row) || !isZeroDate(row[c].Raw()) {
				continue
			}
			if !copied {
				rows, copied = make([][]sqltypes.Value, len(r.Rows)), true
				for i := range r.Rows {
					rows[i] = append([]sqltypes.Value(nil), r.Rows[i]...)
				}
			}
			// An empty value is the binary protocol's zero date (length
			// 0), as MariaDB sends it; vitess sends 0000-00-00 as a
			// 4-byte date, which drivers decode as -0001-11-30.
			rows[ri][c] = sqltypes.MakeTrusted(row[c].Type(), nil)
		}
	}
	if !copied && (len(fields) == 0 || &fields[0] == &r.Fields[0]) {
		return r
	}
	c := *r
	c.Fields, c.Rows = fields, rows
	return &c
}

func isDate(t querypb.Type) bool {
	return t == sqltypes.Date || t == sqltypes.Datetime || t == sqltypes.Timestamp
}

// isZeroDate reports whether raw is MySQL's zero date or datetime
// ("0000-00-00", "0000-00-00 00:00:00[.000000]").
func isZeroDate(raw []byte) bool {
	if len(raw) < 10 || string(raw[:10]) != "0000-00-00" {
		return false
	}
	for _, b := range raw[10:] {
		if b != '0' && b != ' ' && b != ':' && b != '.' {
			return false
		}
	}
	return true
}

// fixDateParams rewrites the DATE/DATETIME/TIMESTAMP parameters of a
// COM_STMT_EXECUTE into MySQL's text form. vitess decodes them without
// zero padding and with the microseconds as a bare integer ("1-1-1
// 3:25:45.5" for 5 µs), which go-mysql-server then cannot cast to TIME and
// reads as half a second; a zero-length value (the zero date) becomes a
// space.
func fixDateParams(p *mysql.PrepareData) {
	if p == nil {
		return
	}
	for i, t := range p.ParamsType {
		if typ := querypb.Type(t); typ != sqltypes.Date && typ != sqltypes.Datetime && typ != sqltypes.Timestamp {
			continue
		}
		name := "v" + strconv.Itoa(i+1)
		bv := p.BindVars[name]
		if bv == nil || bv.Type != sqltypes.VarChar {
			continue
		}
		if s, ok := normalizeBinaryDate(string(bv.Value)); ok {
			p.BindVars[name] = &querypb.BindVariable{Type: bv.Type, Value: []byte(s)}
		}
	}
}

var reVitessDate = regexp.MustCompile(`^(\d+)-(\d+)-(\d+)(?: (\d+):(\d+):(\d+)(?:\.(\d+))?)?$`)

// normalizeBinaryDate turns vitess's rendering of a binary date parameter
// into "YYYY-MM-DD[ hh:mm:ss[.ffffff]]".
func normalizeBinaryDate(s string) (string, bool) {
	if s == " " {
		return "0000-00-00 00:00:00", true
	}
	m := reVitessDate.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	n := make([]int, 7)
	for i := 1; i <= 7; i++ {
		if m[i] != "" {
			v, err := strconv.Atoi(m[i])
			if err != nil {
				return "", false
			}
			n[i-1] = v
		}
	}
	out := fmt.Sprintf("%04d-%02d-%02d", n[0], n[1], n[2])
	if m[4] != "" {
		out += fmt.Sprintf(" %02d:%02d:%02d", n[3], n[4], n[5])
	}
	if m[7] != "" && n[6] != 0 {
		out += fmt.Sprintf(".%06d", n[6])
	}
	return out, true
}

// applyHandshakeCollation gives a new session the character set and
// collation the client asked for in its handshake (the collation id of
// the handshake response), as MySQL does: character_set_client,
// character_set_connection, character_set_results and
// collation_connection. An id go-mysql-server does not know keeps the
// defaults.
func applyHandshakeCollation(ctx context.Context, s sql.Session, id uint8) error {
	if id == 0 {
		return nil
	}
	coll := sql.CollationID(id)
	name := coll.Name()
	if name == "" {
		return nil
	}
	if _, err := sql.ParseCollation("", name, false); err != nil {
		return nil
	}
	cs := coll.CharacterSet().Name()
	sctx := sql.NewContext(ctx, sql.WithSession(s))
	for _, kv := range [][2]string{{"character_set_client", cs}, {"character_set_connection", cs},
		{"character_set_results", cs}, {"collation_connection", name}} {
		if err := s.SetSessionVariable(sctx, kv[0], kv[1]); err != nil {
			return fmt.Errorf("set %s = %s from the handshake: %w", kv[0], kv[1], err)
		}
	}
	return nil
}

// applyTLSStatus sets the session's Ssl_cipher and Ssl_version status
// variables from the connection's TLS state (empty on plain connections),
// as MySQL reports them for SHOW STATUS LIKE 'Ssl%'. The cipher is Go's
// (IANA) name, e.g. TLS_AES_128_GCM_SHA256; MySQL prints OpenSSL's.
func applyTLSStatus(ctx context.Context, s sql.Session, conn net.Conn) error {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	version := map[uint16]string{tls.VersionTLS10: "TLSv1", tls.VersionTLS11: "TLSv1.1", tls.VersionTLS12: "TLSv1.2", tls.VersionTLS13: "TLSv1.3"}[st.Version]
	sctx := sql.NewContext(ctx, sql.WithSession(s))
	if err := s.SetStatusVariable(sctx, "Ssl_cipher", tls.CipherSuiteName(st.CipherSuite)); err != nil {
		return fmt.Errorf("set Ssl_cipher: %w", err)
	}
	if err := s.SetStatusVariable(sctx, "Ssl_version", version); err != nil {
		return fmt.Errorf("set Ssl_version: %w", err)
	}
	return nil
}

// reSetNamesCollate: SET NAMES cs COLLATE coll, whose COLLATE part
// go-mysql-server ignores (the connection keeps cs's default collation).
var reSetNamesCollate = regexp.MustCompile("(?is)^\\s*SET\\s+NAMES\\s+('[^']*'|\"[^\"]*\"|`[^`]*`|\\w+)\\s+COLLATE\\s+('[^']*'|\"[^\"]*\"|`[^`]*`|\\w+)[\\s;]*$")

// rewriteSetNames returns the statement that sets what SET NAMES cs
// COLLATE coll sets in MySQL.
func rewriteSetNames(q string) (string, bool) {
	m := reSetNamesCollate.FindStringSubmatch(q)
	if m == nil {
		return "", false
	}
	unq := func(s string) string {
		if s[0] == '\'' || s[0] == '"' || s[0] == '`' {
			s = s[1 : len(s)-1]
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	cs, coll := unq(m[1]), unq(m[2])
	return "SET character_set_client = " + cs + ", character_set_results = " + cs +
		", character_set_connection = " + cs + ", collation_connection = " + coll, true
}

var reIdentWord = regexp.MustCompile("`[^`]+`|[A-Za-z_$][A-Za-z0-9_$]*")

// restoreAliasCase gives result fields the table alias as the query spells
// it: go-mysql-server lower-cases aliases ("... AS A" comes back as table
// "a"), MySQL keeps them as written (drivers build "A.one" from it). Only
// a name spelt one way in the query is restored; fields is not modified.
func restoreAliasCase(fields []*querypb.Field, query string) []*querypb.Field {
	var out []*querypb.Field
	spelling := map[string]string{}
	for i, f := range fields {
		if f == nil || f.Table == "" || strings.Contains(query, f.Table) {
			continue
		}
		sp, ok := spelling[f.Table]
		if !ok {
			sp = uniqueSpelling(query, f.Table)
			spelling[f.Table] = sp
		}
		if sp == "" {
			continue
		}
		if out == nil {
			out = append([]*querypb.Field(nil), fields...)
		}
		out[i] = &querypb.Field{Name: f.Name, Type: f.Type, Table: sp, OrgTable: f.OrgTable, Database: f.Database,
			OrgName: f.OrgName, ColumnLength: f.ColumnLength, Charset: f.Charset, Decimals: f.Decimals, Flags: f.Flags}
	}
	if out == nil {
		return fields
	}
	return out
}

// uniqueSpelling returns the one spelling of name (case-insensitively) among
// the identifiers of query, "" when there is none or more than one.
func uniqueSpelling(query, name string) string {
	found := ""
	for _, w := range reIdentWord.FindAllString(query, -1) {
		if w[0] == '`' {
			w = w[1 : len(w)-1]
		}
		if !strings.EqualFold(w, name) || w == found {
			continue
		}
		if found != "" {
			return ""
		}
		found = w
	}
	return found
}

// MariaDB's equivalents of MySQL 8's utf8mb4_0900 collations, which it
// does not know ("Unknown collation" when a dump is loaded). The 0900
// collations do not pad, hence the nopad variants.
var mariaCollation = map[string]string{
	"utf8mb4_0900_bin":   "utf8mb4_nopad_bin",
	"utf8mb4_0900_ai_ci": "utf8mb4_uca1400_nopad_ai_ci",
	"utf8mb4_0900_as_ci": "utf8mb4_uca1400_nopad_as_ci",
	"utf8mb4_0900_as_cs": "utf8mb4_uca1400_nopad_as_cs",
}

var (
	reCollate0900  = regexp.MustCompile(`\bCOLLATE([= ])(utf8mb4_0900_(?:bin|ai_ci|as_ci|as_cs))\b`)
	reShowCreateTb = regexp.MustCompile(`(?is)^\s*SHOW\s+CREATE\s+TABLE\b`)
)

// portableCreateTable writes the 0900 collations of a SHOW CREATE TABLE
// text so that MySQL and dpsql read them (/*!80000 … */, which MariaDB
// skips) and MariaDB reads its equivalent (/*M!…*/, which MySQL and dpsql
// skip): a mariadb-dump of a dpsql table loads into MariaDB (issue 29
// item 9) and still restores into dpsql unchanged. The uca1400 collations
// are MariaDB 10.10's; older MariaDBs use the character set's default.
func portableCreateTable(create string) string {
	return reCollate0900.ReplaceAllStringFunc(create, func(m string) string {
		sub := reCollate0900.FindStringSubmatch(m)
		version := "100202" // utf8mb4_nopad_bin
		if sub[2] != "utf8mb4_0900_bin" {
			version = "101000"
		}
		return "/*!80000 " + m + " */ /*M!" + version + " COLLATE" + sub[1] + mariaCollation[sub[2]] + " */"
	})
}

// showCreateResults applies portableCreateTable to SHOW CREATE TABLE.
func showCreateResults(callback mysql.ResultSpoolFn, stmt string) mysql.ResultSpoolFn {
	if !reShowCreateTb.MatchString(stmt) {
		return callback
	}
	return func(r *sqltypes.Result, more bool) error {
		col := -1
		for i, f := range r.Fields {
			if f.Name == "Create Table" {
				col = i
			}
		}
		if col < 0 {
			return callback(r, more)
		}
		return callback(mapRows(r, func(row []sqltypes.Value) {
			if col < len(row) && !row[col].IsNull() {
				row[col] = sqltypes.MakeTrusted(row[col].Type(), []byte(portableCreateTable(string(row[col].Raw()))))
			}
		}), more)
	}
}

// mapRows returns a copy of r whose rows are copies of r's passed through f.
func mapRows(r *sqltypes.Result, f func(row []sqltypes.Value)) *sqltypes.Result {
	out := *r
	out.Rows = make([][]sqltypes.Value, len(r.Rows))
	for i, row := range r.Rows {
		row = append([]sqltypes.Value(nil), row...)
		f(row)
		out.Rows[i] = row
	}
	return &out
}
