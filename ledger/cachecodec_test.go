package ledger

import "testing"

// The decoder's one-byte fast paths read what binary.Uvarint and Varint read.
func TestDecoderVarintsMatchBinary(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 127, 128, 1 << 40, -(1 << 40)} {
		var e encoder
		e.int(v)
		e.uint(uint64(v))
		d := decoder{b: e.b}
		if got := d.int(); got != v {
			t.Errorf("int %d: decoded %d", v, got)
		}
		if got := d.uint(); got != uint64(v) || d.bad || len(d.b) != 0 {
			t.Errorf("uint %d: decoded %d (bad %v, %d bytes left)", uint64(v), got, d.bad, len(d.b))
		}
	}
}
