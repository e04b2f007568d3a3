package store

import (
	"errors"

	"github.com/dolthub/go-mysql-server/sql"
)

// Triggers and stored procedures are refused outright: a trigger on a
// protected table would copy every new row somewhere else, and a stored
// procedure would run statements with its definer's rights. The database
// still implements the interfaces (with empty lists) because
// go-mysql-server's privilege wrapper asks for them on every INSERT and CALL
// and treats "not implemented" as an error.
var (
	errNoTriggers   = errors.New("triggers are not supported by dpsql")
	errNoProcedures = errors.New("user-defined stored procedures are not supported by dpsql (the dp_* procedures are built in)")
)

var (
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
)

func (d *Database) GetTriggers(*sql.Context) ([]sql.TriggerDefinition, error) { return nil, nil }
func (d *Database) CreateTrigger(*sql.Context, sql.TriggerDefinition) error   { return errNoTriggers }
func (d *Database) DropTrigger(*sql.Context, string) error                    { return errNoTriggers }

func (d *Database) GetStoredProcedure(*sql.Context, string) (sql.StoredProcedureDetails, bool, error) {
	return sql.StoredProcedureDetails{}, false, nil
}
func (d *Database) GetStoredProcedures(*sql.Context) ([]sql.StoredProcedureDetails, error) {
	return nil, nil
}
func (d *Database) SaveStoredProcedure(*sql.Context, sql.StoredProcedureDetails) error {
	return errNoProcedures
}
func (d *Database) DropStoredProcedure(*sql.Context, string) error { return errNoProcedures }
