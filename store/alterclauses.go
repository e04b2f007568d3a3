package store

import (
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// ALTER TABLE clauses the store cannot honour. go-mysql-server's parser
// accepts many ALTER TABLE clauses and drops them (table options, partition
// maintenance, tablespaces, index visibility, constraint enforcement), so the
// statement would succeed and change nothing; checkAlterClauses refuses them
// before anything runs. Accepted as no-ops, as InnoDB does or because they
// are hints: ENGINE=InnoDB, ALGORITHM, LOCK, FORCE, DISABLE/ENABLE KEYS
// (mysqldump), ALTER INDEX … VISIBLE. Physical tuning options with no effect
// on results (ROW_FORMAT, KEY_BLOCK_SIZE, STATS_*, …) are refused too: a
// user setting them expects an effect.

// refusedAlterClauses maps the first word of a clause to what to say.
var refusedAlterClauses = map[string]string{
	"PARTITION":                  "partitioning is not supported (tables are not partitioned)",
	"REMOVE":                     "partitioning is not supported (tables are not partitioned)",
	"COALESCE":                   "partitioning is not supported (tables are not partitioned)",
	"REORGANIZE":                 "partitioning is not supported (tables are not partitioned)",
	"EXCHANGE":                   "partitioning is not supported (tables are not partitioned)",
	"ANALYZE":                    "partitioning is not supported (tables are not partitioned)",
	"CHECK":                      "partitioning is not supported (tables are not partitioned)",
	"OPTIMIZE":                   "partitioning is not supported (tables are not partitioned)",
	"REBUILD":                    "partitioning is not supported (tables are not partitioned)",
	"REPAIR":                     "partitioning is not supported (tables are not partitioned)",
	"TRUNCATE":                   "partitioning is not supported (tables are not partitioned)",
	"UPGRADE":                    "partitioning is not supported (tables are not partitioned)",
	"DISCARD":                    "tablespaces are not supported (one store file)",
	"IMPORT":                     "tablespaces are not supported (one store file)",
	"TABLESPACE":                 "tablespaces are not supported (one store file)",
	"UNION":                      "MERGE tables are not supported",
	"INSERT_METHOD":              "MERGE tables are not supported",
	"COMMENT":                    "changing a table comment is not supported (set it in CREATE TABLE)",
	"DATA":                       "data and index directories are not supported (one store file)",
	"INDEX":                      "data and index directories are not supported (one store file)",
	"ENCRYPTION":                 "table options are not supported by the store",
	"COMPRESSION":                "table options are not supported by the store",
	"ROW_FORMAT":                 "table options are not supported by the store",
	"KEY_BLOCK_SIZE":             "table options are not supported by the store",
	"STATS_PERSISTENT":           "table options are not supported by the store",
	"STATS_AUTO_RECALC":          "table options are not supported by the store",
	"STATS_SAMPLE_PAGES":         "table options are not supported by the store",
	"MAX_ROWS":                   "table options are not supported by the store",
	"MIN_ROWS":                   "table options are not supported by the store",
	"AVG_ROW_LENGTH":             "table options are not supported by the store",
	"PACK_KEYS":                  "table options are not supported by the store",
	"CHECKSUM":                   "table options are not supported by the store",
	"DELAY_KEY_WRITE":            "table options are not supported by the store",
	"AUTOEXTEND_SIZE":            "table options are not supported by the store",
	"ENGINE_ATTRIBUTE":           "table options are not supported by the store",
	"SECONDARY_ENGINE":           "table options are not supported by the store",
	"SECONDARY_ENGINE_ATTRIBUTE": "table options are not supported by the store",
	"SECONDARY_LOAD":             "secondary engines are not supported",
	"SECONDARY_UNLOAD":           "secondary engines are not supported",
	"WITH":                       "partitioning is not supported (tables are not partitioned)",
	"WITHOUT":                    "partitioning is not supported (tables are not partitioned)",
}

// checkAlterClauses refuses an ALTER TABLE statement with a clause the store
// would silently ignore. Statements that are not ALTER TABLE pass.
func checkAlterClauses(query string) error {
	if !containsFold(query, "alter") && !containsFold(query, "index") {
		return nil
	}
	st, err := sqlparser.Parse(query)
	if err != nil {
		return nil // the engine reports the syntax error
	}
	at, ok := st.(*sqlparser.AlterTable)
	if !ok {
		return nil
	}
	for _, d := range at.Statements {
		if d.IndexSpec != nil && strings.EqualFold(d.IndexSpec.Type, sqlparser.FulltextStr) {
			return fmt.Errorf("FULLTEXT index on %s: full-text indexes are not supported by the dpsql store (PRIMARY KEY, KEY and UNIQUE KEY are); nothing was changed", at.Table.Name.String())
		}
	}
	if len(at.PartitionSpecs) > 0 {
		return alterRefused("PARTITION", refusedAlterClauses["PARTITION"])
	}
	for _, c := range alterClauses(query) {
		if len(c) == 0 {
			continue
		}
		first := c[0]
		if (first == "ADD" || first == "DROP") && len(c) >= 2 && c[1] == "PARTITION" {
			return alterRefused(first+" PARTITION", refusedAlterClauses["PARTITION"])
		}
		if first == "ENGINE" || first == "TYPE" {
			v := ""
			for _, w := range c[1:] {
				if w != "=" {
					v = w
					break
				}
			}
			if !strings.EqualFold(v, "InnoDB") {
				return alterRefused("ENGINE="+v, "tables live in the dpsql transactional store; ENGINE=InnoDB is the only engine")
			}
			continue
		}
		if first == "ALTER" && len(c) >= 2 {
			switch c[1] {
			case "INDEX", "KEY":
				if len(c) >= 4 && c[3] == "INVISIBLE" {
					return alterRefused("ALTER INDEX … INVISIBLE", "invisible indexes are not supported (drop the index instead)")
				}
			case "CHECK", "CONSTRAINT":
				return alterRefused("ALTER "+c[1]+" … ENFORCED", "changing the enforcement of a constraint is not supported (drop and add it)")
			}
			continue
		}
		if why, ok := refusedAlterClauses[first]; ok {
			// INDEX / DATA are table options only as "… DIRECTORY".
			if (first == "INDEX" || first == "DATA") && (len(c) < 2 || c[1] != "DIRECTORY") {
				continue
			}
			// CHECK starts a constraint in ADD … CHECK, never a clause;
			// as a clause it is CHECK PARTITION.
			return alterRefused(first, why)
		}
	}
	return nil
}

func alterRefused(clause, why string) error {
	return fmt.Errorf("ALTER TABLE … %s: %s; nothing was changed", clause, why)
}

// alterClauses splits the text of an ALTER TABLE statement after the table
// name into its comma-separated clauses, each as its upper-cased words
// (string literals and nested parentheses kept out of the split).
func alterClauses(query string) [][]string {
	tkn := sqlparser.NewStringTokenizer(query)
	var words []string
	var lits []bool
	for {
		typ, val := tkn.Scan()
		if typ == 0 || typ == sqlparser.LEX_ERROR {
			break
		}
		w := string(val)
		if w == "" && typ < 256 {
			w = string(rune(typ))
		}
		words = append(words, strings.ToUpper(w))
		lits = append(lits, typ == sqlparser.STRING)
	}
	// Skip ALTER [ONLINE|IGNORE] TABLE name[.name].
	i := 0
	for i < len(words) && words[i] != "TABLE" {
		i++
	}
	i += 2
	if i < len(words) && words[i] == "." {
		i += 2
	}
	var out [][]string
	var cur []string
	depth := 0
	for ; i < len(words); i++ {
		w := words[i]
		switch {
		case lits[i]:
		case w == "(":
			depth++
		case w == ")":
			depth--
		case w == "," && depth == 0:
			out = append(out, cur)
			cur = nil
			continue
		case w == ";" && depth == 0:
			i = len(words)
			continue
		}
		cur = append(cur, w)
	}
	return append(out, cur)
}

// containsFold reports whether s contains the lower-case ASCII word sub in
// any case, without allocating (it runs for every statement). The
// candidates, where s has sub's first letter in either case, are found with
// strings.IndexByte (vectorized): a bulk INSERT's text of hundreds of
// kilobytes has few of them, and a byte loop over it was ≈ 0.6 ms per
// statement (issue 13).
func containsFold(s, sub string) bool {
	lo, up := sub[0], sub[0]&^0x20
	nextLo, nextUp := -1, -1 // next position of each case at or after i (-2: none)
	for i := 0; i+len(sub) <= len(s); {
		if nextLo != -2 && nextLo < i {
			if nextLo = strings.IndexByte(s[i:], lo); nextLo >= 0 {
				nextLo += i
			} else {
				nextLo = -2
			}
		}
		if nextUp != -2 && nextUp < i {
			if nextUp = strings.IndexByte(s[i:], up); nextUp >= 0 {
				nextUp += i
			} else {
				nextUp = -2
			}
		}
		switch {
		case nextLo == -2 && nextUp == -2:
			return false
		case nextUp == -2 || nextLo != -2 && nextLo < nextUp:
			i = nextLo
		default:
			i = nextUp
		}
		if i+len(sub) <= len(s) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
		i++
	}
	return false
}
