//go:build !linux

package bigmem

import "unsafe"

// adviseHuge is a no-op where transparent huge pages are not Linux's.
func adviseHuge(unsafe.Pointer, uintptr, uintptr) {}
