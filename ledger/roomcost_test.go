package ledger

import (
	"testing"
	"time"
)

// Reading the room from the cache allocates about the same with 40 open
// claims or 400: the claims file's records are decoded into one array of
// facts, their strings cut from one copy and their scope lists from one
// array, and the contested check allocates per room, not per claim. Each
// claim is decoded once.
func TestRoomReadAllocationsFlatInOpenClaims(t *testing.T) {
	type cost struct {
		allocs  float64
		decoded int64
	}
	measure := func(open int) cost {
		c, now := openClaimsClone(t, open)
		ClaimsDecoded.Store(0)
		n := 0
		allocs := testing.AllocsPerRun(5, func() {
			l, err := Open(c.common(), func() time.Time { return *now })
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			st, err := l.Read()
			if err != nil {
				t.Fatal(err)
			}
			if r := st.Room(*now); len(r.Claims) != open {
				t.Fatalf("%d open claims: the room shows %d", open, len(r.Claims))
			}
			n++
		})
		return cost{allocs, ClaimsDecoded.Load() / int64(n)}
	}
	small, large := measure(40), measure(400)
	t.Logf("a room read allocates %.0f times with 40 open claims, %.0f with 400", small.allocs, large.allocs)
	if per := (large.allocs - small.allocs) / 360; per > 0.05 {
		t.Errorf("a room read allocates %.0f times with 40 open claims, %.0f with 400: %.2f a claim", small.allocs, large.allocs, per)
	}
	if small.decoded > 40 || large.decoded > 400 {
		t.Errorf("a room read decodes %d claims of 40, %d of 400", small.decoded, large.decoded)
	}
}
