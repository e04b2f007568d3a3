package guard

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
)

// protectedStats hides the planner statistics (histograms built by ANALYZE
// TABLE, whose bucket bounds are row values) of protected tables. The guard
// refuses ANALYZE on a protected table, but statistics gathered before the
// table was protected would otherwise stay visible in
// information_schema.column_statistics.
type protectedStats struct {
	sql.StatsProvider
	cat *catalog.Catalog
}

func (p protectedStats) protected(db string, table sql.Table) bool {
	return table != nil && p.cat.IsProtected(catalog.Key(db, table.Name()))
}

func (p protectedStats) GetTableStats(ctx *sql.Context, db string, table sql.Table) ([]sql.Statistic, error) {
	if p.protected(db, table) {
		return nil, nil
	}
	return p.StatsProvider.GetTableStats(ctx, db, table)
}

func (p protectedStats) GetStats(ctx *sql.Context, qual sql.StatQualifier, cols []string) (sql.Statistic, bool) {
	if p.cat.IsProtected(catalog.Key(qual.Db(), qual.Table())) {
		return nil, false
	}
	return p.StatsProvider.GetStats(ctx, qual, cols)
}

// RowCount and DataLength are 0 for protected tables like their statistics:
// a count kept from an ANALYZE made before protection would otherwise reach
// the planner (and a unit table's row count is not public).
func (p protectedStats) RowCount(ctx *sql.Context, db string, table sql.Table) (uint64, error) {
	if p.protected(db, table) {
		return 0, nil
	}
	return p.StatsProvider.RowCount(ctx, db, table)
}

func (p protectedStats) DataLength(ctx *sql.Context, db string, table sql.Table) (uint64, error) {
	if p.protected(db, table) {
		return 0, nil
	}
	return p.StatsProvider.DataLength(ctx, db, table)
}

func (p protectedStats) AnalyzeTable(ctx *sql.Context, table sql.Table, db string) error {
	if p.protected(db, table) {
		return fmt.Errorf("ANALYZE TABLE is refused on protected table %s: its statistics would describe the rows", catalog.Key(db, table.Name()))
	}
	return p.StatsProvider.AnalyzeTable(ctx, table, db)
}

// ProtectStats wraps the analyzer's statistics provider (see protectedStats).
func ProtectStats(inner sql.StatsProvider, cat *catalog.Catalog) sql.StatsProvider {
	return protectedStats{StatsProvider: inner, cat: cat}
}
