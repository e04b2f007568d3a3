package catalog

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestAnswerCacheBounded: the cache holds at most its bounds, evicts the
// oldest answers first, counts a replaced answer once, and recounts after
// a reopen. An evicted answer is simply absent (the next query is charged).
func TestAnswerCacheBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, c := openAt(t, path)
	if err := c.SetAnswerCacheLimits(3, 1<<20); err != nil {
		t.Fatal(err)
	}
	id := func(i int) []byte { return []byte(fmt.Sprintf("id%02d", i)) }
	for i := 0; i < 5; i++ {
		if err := c.StoreAnswer("d.t", id(i), []byte("answer")); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		_, ok := c.CachedAnswer(id(i))
		if ok != (i >= 2) {
			t.Fatalf("answer %d cached = %v after 5 stores with room for 3", i, ok)
		}
	}
	if n, b := c.AnswerCacheSize(); n != 3 || b != 18 {
		t.Fatalf("cache size %d entries, %d bytes; want 3, 18", n, b)
	}
	// Replacing answer 2 (dp_fresh) makes it the newest: 3 goes next.
	if err := c.StoreAnswer("d.t", id(2), []byte("fresh answer")); err != nil {
		t.Fatal(err)
	}
	if err := c.StoreAnswer("d.t", id(5), []byte("answer")); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{2: true, 3: false, 4: true, 5: true} {
		if _, ok := c.CachedAnswer(id(i)); ok != want {
			t.Fatalf("after replace: answer %d cached = %v", i, ok)
		}
	}
	if v, _ := c.CachedAnswer(id(2)); string(v) != "fresh answer" {
		t.Fatalf("replaced answer = %q", v)
	}
	// A byte bound evicts as well, but never the answer just stored.
	if err := c.SetAnswerCacheLimits(100, 20); err != nil {
		t.Fatal(err)
	}
	if err := c.StoreAnswer("d.t", id(6), []byte("a long answer, 30 bytes long!!")); err != nil {
		t.Fatal(err)
	}
	if n, b := c.AnswerCacheSize(); n != 1 || b != 30 {
		t.Fatalf("byte bound: %d entries, %d bytes; want the new answer only", n, b)
	}
	if _, ok := c.CachedAnswer(id(6)); !ok {
		t.Fatal("the answer just stored was evicted")
	}
	if err := c.SetAnswerCacheLimits(0, 1); err == nil {
		t.Fatal("zero entries accepted")
	}
	db.Close()
	_, c = openAt(t, path)
	if n, b := c.AnswerCacheSize(); n != 1 || b != 30 {
		t.Fatalf("after reopen: %d entries, %d bytes", n, b)
	}
}
