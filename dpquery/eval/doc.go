// Package eval compiles the analyst's row expressions of a DP read (the
// WHERE of a DP aggregate query, partition selection, and the privacy-unit
// compiler's filters) into total, fixed-cost programs and evaluates them on
// rows read from protected tables.
//
// Why it exists: go-mysql-server's own expressions panic on some values
// (CONVERT(±Inf, DECIMAL)), return errors, short-circuit AND/OR and take time
// that grows with the values (string→DECIMAL conversion is quadratic in the
// string's length). Evaluated on protected rows, each of these is an output
// that depends on one row, outside any noise (issue 25). Here:
//
//   - every admitted operator is total: it never panics or errors on any
//     value (±Inf, NaN, NULL, −0, 1e308, empty or 1 MiB strings); a value
//     that MySQL would reject (overflow, division by zero, a non-finite
//     intermediate) is NULL, and a row whose predicate is not TRUE is left
//     out, exactly like FALSE;
//   - its cost is a function of the compiled program alone: every conjunct
//     and disjunct is evaluated on every row, string operations run a number
//     of steps fixed by the literal's length or the column's declared length,
//     and operators whose cost depends on values (string→number/DECIMAL/JSON
//     conversion of a column, REGEXP, string functions) are refused at
//     compile time with a message naming the operator;
//   - constant subexpressions are folded and literal lengths bounded at
//     compile time, before any charge.
//
// The derivation and the list of operators are in docs/privacy/predicates.md.
//
// Imports: go-mysql-server's sql, expression and types packages (to read the
// analyser's bound expression trees) and the standard library. It may not
// import anything of dpsql: the engine, the catalog, the accountant and the
// mechanisms sit above or beside it.
package eval
