package main

import "github.com/dpsql/dpsql/engine/store"

func storeImportOptions() store.ImportOptions { return store.ImportOptions{} }
