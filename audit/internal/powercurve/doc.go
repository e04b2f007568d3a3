// Command powercurve measures the power of the audit: for Laplace noise whose
// scale is a fraction of the correct Δ/ε, it reports how often audit.Run
// catches the violation at each N (samples per side).
//
//	go run ./audit/internal/powercurve -factor 0.5 -n 500,1000,2000 -reps 20
//
// Imports: audit, noise. A command under audit/internal: no package
// imports it, and production code may not import audit.
package main
