// Package dump makes mysqldump and its restore keep protection: for data
// owners SHOW CREATE TABLE carries a table's catalog entry, budget account
// and models in its COMMENT (for a table of a privacy unit, also the unit's
// shared account), and replaying such a CREATE TABLE installs them
// before the table exists (PreRule, PostRule); the dpsql views dump as
// placeholders that restore as no-ops; Parser answers mysqldump's questions
// about mysql.general_log and mysql.slow_log. See dump.go for the protocol.
//
// Imports: budget, catalog, functions, guard (who is an owner, a new
// table's protection) and store. It may not import engine, server,
// fastpath or scaleout.
package dump
