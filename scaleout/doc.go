// Package scaleout routes reads between the embedded store and a
// MariaDB/MySQL (or Spider) backend (issue 14, docs/scale-out.md): the DP
// functions' reads of attached tables go to mysqlstore, every other read to
// store (NewRows); the database provider lists attached tables through
// Attached; dp_attach and dp_detach are its owner-only procedures.
//
// Imports: catalog, functions, mysqlstore and store. It may not import
// engine, guard (the engine hands it the guard's read check), server,
// fastpath or dump.
package scaleout
