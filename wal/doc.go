// Package wal puts a write-ahead log in front of dpsql's bbolt file, so that
// a group commit costs one log fdatasync instead of bbolt's two fdatasyncs
// over ≈ 13 pages, while a power loss at any moment still recovers exactly
// the commits whose log record was durable (docs/results/storage.md, "A
// write-ahead log that is safe against power loss (h/wal)").
//
// bbolt runs with NoSync. Its file is therefore durable only at checkpoints:
// with every writer paused, the file is fdatasynced (state C), a checkpoint
// record holding C's txid and a copy of C's meta page is written at the start
// of the log and fdatasynced, and a bbolt read transaction stays open at C
// until the next checkpoint, so that bbolt never re-uses a page of C (it
// frees a page only once no reader is older than the commit that freed it).
// Recovery after an unclean stop writes C's meta page into both meta slots
// (C's pages are intact and everything else is free space in C), opens
// bbolt and replays the commit records that follow the checkpoint record.
//
// Log format (dpsql.wal beside dpsql.db, preallocated with zeros so that an
// fdatasync of a record rewrites allocated blocks only):
//
//	record = len u32 | CRC-32C(body) u32 | body (len bytes)
//	body   = LSN u64 | generation u64 | kind u8 | payload
//	kind 1 (checkpoint): txid u64 | page size u32 | meta page
//	kind 2 (commit):     op* ; op = put|del u8, path (n u8, (len u16, name)*), key (u32, bytes), value (u32, bytes; puts only)
//
// The checkpoint record is always at offset 0 and draws a new random
// generation; the commit records follow it with consecutive LSNs and its
// generation. The first record that does not check (length, CRC, LSN,
// generation) ends the log: a torn tail, or records of an older generation
// left in the preallocated file. A commit record holds the whole values
// (and deletions) the commit wrote, so replaying it is idempotent.
//
// Writers. Update is the only way to write the shared bbolt file outside the
// store's group commit (catalog, budget ledger, store DDL and bulk paths,
// engine): it pauses the group commit, commits, and checkpoints before it
// returns, so that its write is exactly as durable as bbolt's own commit was.
// Logged is the group commit's path: inside bbolt's write transaction the
// caller applies its writes and records them; the record is written and
// fdatasynced before bbolt commits, and a bbolt commit that fails after that
// stops the process (recovery replays the record). LoggedThen and LoggedAsync
// also call back the moment the record is durable, so that the store can
// answer its clients then; LoggedAsync runs bbolt's commit and a due
// checkpoint on another goroutine, holding the log until they are over.
//
// Mapping. The pinned reader holds bbolt's mmap lock, and a commit that
// needs a larger mapping would wait for it forever; a write that could
// outgrow the mapping drops the pin inside its transaction (after bbolt
// computed the transaction's free pages, so C's pages stay untouched) and is
// followed at once by a checkpoint.
//
// Imports: only bbolt and the standard library. It is the ground floor of
// storage: catalog, budget, store and mysqlstore import it, and it may not
// import any dpsql package.
package wal
