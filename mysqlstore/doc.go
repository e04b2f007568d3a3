// Package mysqlstore keeps protected tables in an existing MariaDB/MySQL
// server, or on a MariaDB Spider cluster, instead of dpsql's embedded bbolt
// file (issue 14, docs/scale-out.md).
//
// An owner attaches an existing table in place (CALL dp_attach('db.t')):
// dpsql then lists db.t beside the embedded tables, read-only, and the DP
// functions read it through this package. The catalog (bounds, domains,
// protection), the accountant and the accounts stay in the embedded store;
// only the attachment list is added to it. The backend account is dpsql's
// alone: analysts never see its name, its password or its server, and
// nothing they type is sent to the backend (every statement here is built
// from identifiers checked against the attached schema and from numbers
// computed by dpsql).
//
// Releases read one consistent snapshot: each scan or aggregate runs in a
// REPEATABLE READ transaction started WITH CONSISTENT SNAPSHOT (one
// statement on Spider, whose shards each read their own snapshot), and the
// n a mechanism uses is the row count of that same snapshot. Statistics are
// pushed down as aggregate SQL (Pushdown): clipping to the declared bounds
// and NULL handling are evaluated in the query with the same IEEE double
// operations as the embedded path, and the per-row terms are summed as
// DECIMAL, exactly, so that the result does not depend on the order of the
// rows or on the number of shards, and is rounded to float64 once.
// Person-level releases push their per-(person, group) counts and
// clamped sums (PersonGroups, docs/privacy/units.md §11); dpsql does the
// per-person sampling, capping and clamping on them.
//
// Imports: wal (the attachment list in the bbolt file) and functions (the
// Rows and Pushdown interfaces and their argument types). It may not import
// store, guard, fastpath, dump, scaleout, server or engine: scaleout routes
// between it and store.
package mysqlstore
