package main

import (
	"math/rand/v2"

	"github.com/callbus/callbus/internal/event"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func typeOf(s string) event.Type { return event.Type(s) }
