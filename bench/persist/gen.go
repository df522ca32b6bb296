// Package persist is the machine of the persistence benchmark (persist.fsm.yaml).
package persist

//go:generate go tool fsmgen generate --outputs go -o . persist.fsm.yaml
