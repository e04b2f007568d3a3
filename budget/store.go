package budget

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Top-level buckets owned by this package in the server's bbolt file.
var (
	budgetBucket  = []byte("budget")  // table key → account (JSON)
	ledgerBucket  = []byte("ledger")  // 8-byte big-endian release id → record (JSON)
	pendingBucket = []byte("pending") // nested in ledger: ids still "reserved"
)

const accountVersion = 1

// account is the persisted state of one protected table. Amounts are fixed
// point (units.go): totals rounded down, charges rounded up.
type account struct {
	Version    int       `json:"v"`
	Mode       Mode      `json:"mode"`
	EpsTotal   uint64    `json:"eps_total"`            // units of 10⁻¹²
	DeltaTotal uint64    `json:"delta_total"`          // units of 10⁻¹⁸
	DeltaConv  uint64    `json:"delta_conv,omitempty"` // rdp: part of DeltaTotal reserved for the conversion
	EpsBasic   uint64    `json:"eps_basic"`            // Σ ε of all events (basic composition)
	DeltaBasic uint64    `json:"delta_basic"`          // Σ δ of all events
	Orders     []float64 `json:"orders,omitempty"`     // rdp: Rényi orders, fixed at protect time
	RDP        []uint64  `json:"rdp,omitempty"`        // rdp: Σ RDP per order, units of 10⁻¹², unitsInf = ∞
	Releases   uint64    `json:"releases"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
}

// record is one ledger row.
type record struct {
	Time        time.Time `json:"time"`
	User        string    `json:"user"`
	Table       string    `json:"table"`
	Function    string    `json:"function"`
	Mode        Mode      `json:"mode"`
	Eps         uint64    `json:"eps"`          // charged: rise of the table's reported ε spend
	Delta       uint64    `json:"delta"`        // charged: rise of the table's reported δ spend
	EventsEps   uint64    `json:"events_eps"`   // Σ ε of the release's events
	EventsDelta uint64    `json:"events_delta"` // Σ δ of the release's events
	ReqEps      float64   `json:"req_eps"`
	ReqDelta    float64   `json:"req_delta"`
	Events      []Event   `json:"events"`
	Status      string    `json:"status"`
	Detail      string    `json:"detail,omitempty"`
	Completed   time.Time `json:"completed,omitempty"`
}

func idKey(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

// txState caches the accounts a batch touches so that each is decoded once
// and written once, after every operation of the batch has run.
type txState struct {
	accounts map[string]*account
	dirty    map[string]bool
}

func newTxState() *txState {
	return &txState{accounts: map[string]*account{}, dirty: map[string]bool{}}
}

// get returns the table's account, or nil if the table is not protected.
func (st *txState) get(tx *bolt.Tx, table string) (*account, error) {
	if a, ok := st.accounts[table]; ok {
		return a, nil
	}
	a, err := loadAccount(tx, table)
	if err != nil {
		return nil, err
	}
	st.accounts[table] = a
	return a, nil
}

// set replaces (a != nil) or deletes (a == nil) the table's account.
func (st *txState) set(table string, a *account) {
	st.accounts[table] = a
	st.dirty[table] = true
}

func (st *txState) flush(tx *bolt.Tx) error {
	b := tx.Bucket(budgetBucket)
	for table := range st.dirty {
		a := st.accounts[table]
		if a == nil {
			if err := b.Delete([]byte(table)); err != nil {
				return fmt.Errorf("budget: delete account %s: %w", table, err)
			}
			continue
		}
		buf, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("budget: encode account %s: %w", table, err)
		}
		if err := b.Put([]byte(table), buf); err != nil {
			return fmt.Errorf("budget: store account %s: %w", table, err)
		}
	}
	return nil
}

func loadAccount(tx *bolt.Tx, table string) (*account, error) {
	v := tx.Bucket(budgetBucket).Get([]byte(table))
	if v == nil {
		return nil, nil
	}
	a := new(account)
	if err := json.Unmarshal(v, a); err != nil {
		return nil, fmt.Errorf("budget: corrupt account %s: %w", table, err)
	}
	if a.Version != accountVersion {
		return nil, fmt.Errorf("budget: account %s has unknown version %d", table, a.Version)
	}
	if a.Mode == RDP && len(a.RDP) != len(a.Orders) {
		return nil, fmt.Errorf("budget: corrupt account %s: %d orders, %d RDP values", table, len(a.Orders), len(a.RDP))
	}
	return a, nil
}

func putRecord(tx *bolt.Tx, id uint64, r *record) error {
	buf, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("budget: encode ledger record %d: %w", id, err)
	}
	if err := tx.Bucket(ledgerBucket).Put(idKey(id), buf); err != nil {
		return fmt.Errorf("budget: store ledger record %d: %w", id, err)
	}
	return nil
}

func getRecord(tx *bolt.Tx, id uint64) (*record, error) {
	v := tx.Bucket(ledgerBucket).Get(idKey(id))
	if v == nil {
		return nil, nil
	}
	r := new(record)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, fmt.Errorf("budget: corrupt ledger record %d: %w", id, err)
	}
	return r, nil
}
