// Package syntax rewrites BigQuery/ZetaSQL's differential-privacy clause,
//
//	SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-5,
//	    max_groups_contributed = 2, privacy_unit_column = customer_id) …
//	  SUM(amount, contribution_bounds_per_group => (0, 500)) …
//
// which the vitess parser of go-mysql-server does not know, into the
// ordinary SELECT it parses, plus the options and the per-aggregate bounds
// (docs/sql.md, "Privacy units"). It works on tokens (string literals,
// quoted identifiers and comments are skipped intact) and knows nothing of
// tables or privacy; dpquery/rel compiles the result. It imports only the
// standard library and may not import any dpsql package.
package syntax
