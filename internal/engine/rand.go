package engine

import "math/rand/v2"

func randIntN(n int) int { return rand.IntN(n) }
