// Package functions adapts dpsql's catalog, accountant and mechanisms to SQL:
// the DP_* scalar functions, the dp_* stored procedures and the dpsql system
// views. Adapters are thin: they parse arguments, look up public metadata,
// reserve budget and call a mechanism. They never compute statistics
// themselves.
//
// Every release follows the same order, which the privacy argument needs:
//
//  1. validate arguments against public information only (catalog, schema,
//     public row count, budget); errors here charge nothing;
//  2. reserve the cost durably in the accountant (refused on overspend);
//  3. read the rows straight from storage and run the mechanism;
//  4. mark the ledger entry ok or failed — the charge stays either way.
//
// Imports: budget, catalog and the mechanisms (mechanism/...); storage only
// through the Rows interface (rows.go), which store and scaleout implement.
// It may not import store, mysqlstore, guard, fastpath, dump, scaleout,
// server or engine. sqlhelpers.go holds the small SQL helpers (UserOf,
// TableKey, ToFloat, IsView) the guard and the engine share with it.
package functions
