package main

import (
	"math/rand/v2"

	"github.com/callbus/callbus/events"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func typeOf(s string) events.Type { return events.Type(s) }
