package engine

import (
	"regexp"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	dpguard "github.com/dpsql/dpsql/guard"
	"github.com/dpsql/dpsql/server"
)

// Error codes of dpsql's refusals on privacy grounds (issue 29; docs/sql.md,
// "Error codes"). MySQL leaves 6000–9999 unused; codes above 32767 are read
// as negative by Connector/J, so MySQL's third-party range (50000+) does not
// fit. The SQLSTATE is class 42 (access rule violation) with the
// implementation-defined subclass P00, so that drivers report a
// non-transient error and connection pools keep the connection.
const (
	ERDPBudgetExceeded = 7001 // the table's privacy budget would be overspent
	ERDPQuotaExceeded  = 7002 // the account's quota on the table would be overspent
	ERDPProtected      = 7003 // raw access to a protected table, or a change only owners may make
	ERDPNotProtected   = 7004 // a DP function on a table without a privacy budget
	ERDPInvalid        = 7005 // an invalid privacy parameter (ε, δ, events)
	SSDPRefused        = "42P00"
)

var (
	reProtected    = regexp.MustCompile(`\bis protected\b|\brefused on protected\b`)
	reNotProtected = regexp.MustCompile(`^(?:\w+: )?table \S+ is not protected\b`)
)

// dpErrorCode classifies a refusal by its message (go-mysql-server flattens
// errors to their text before the server sees them; the sentinels' texts
// are matched): its code and SQLSTATE, or 0.
func dpErrorCode(msg string) (int, string) {
	switch {
	case strings.Contains(msg, budget.ErrQuotaExceeded.Error()):
		return ERDPQuotaExceeded, SSDPRefused
	case strings.Contains(msg, budget.ErrBudgetExceeded.Error()):
		return ERDPBudgetExceeded, SSDPRefused
	case strings.Contains(msg, budget.ErrNotProtected.Error()) || reNotProtected.MatchString(msg):
		return ERDPNotProtected, SSDPRefused
	case strings.Contains(msg, budget.ErrInvalid.Error()):
		return ERDPInvalid, SSDPRefused
	case strings.Contains(msg, dpguard.ErrProtected.Error()) || reProtected.MatchString(msg):
		return ERDPProtected, SSDPRefused
	}
	return 0, ""
}

// serverOptions completes opt with what the server asks of the engine.
func (e *Engine) serverOptions(opt server.Options) server.Options {
	if opt.IsOwner == nil {
		opt.IsOwner = e.Catalog.IsOwner
	}
	if opt.IsProtected == nil {
		opt.IsProtected = func(db, table string) bool { return e.Catalog.IsProtected(catalog.Key(db, table)) }
	}
	if opt.DPError == nil {
		opt.DPError = dpErrorCode
	}
	return opt
}
