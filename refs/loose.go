package refs

import (
	"encoding/binary"
	"hash/adler32"
	"os"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// encodeLoose writes a loose object's bytes: the zlib stream of
// "<type> <size>\x00<content>" (gitformat-loose), in one write.
func encodeLoose(f *os.File, t plumbing.ObjectType, data []byte) error {
	_, err := f.Write(storedZlib(t, data))
	return err
}

// storedZlib returns the zlib stream (RFC 1950) of an object's header and
// content in stored deflate blocks (RFC 1951 BTYPE 00), as zlib level 0
// writes it: the bytes framed, nothing compressed. Built by hand, it is
// one buffer and one checksum; compress/zlib at level 0 still copies every
// byte through its compressor's window.
func storedZlib(t plumbing.ObjectType, data []byte) []byte {
	hdr := append(append(t.Bytes(), ' '), strconv.Itoa(len(data))+"\x00"...)
	n := len(hdr) + len(data)
	blocks := max(1, (n+0xffff-1)/0xffff)
	out := make([]byte, 0, 2+n+5*blocks+4)
	out = append(out, 0x78, 0x01) // deflate, 32 KiB window, no dictionary, fastest
	part := func(i int) []byte {  // the i-th byte onward of header then content
		if i < len(hdr) {
			return hdr[i:]
		}
		return data[i-len(hdr):]
	}
	for off, b := 0, 0; b < blocks; b++ {
		size := min(0xffff, n-off)
		final := byte(0)
		if b == blocks-1 {
			final = 1
		}
		out = append(out, final, byte(size), byte(size>>8), ^byte(size), ^byte(size>>8))
		for end := off + size; off < end; {
			p := part(off)
			p = p[:min(len(p), end-off)]
			out = append(out, p...)
			off += len(p)
		}
	}
	a := adler32.New()
	a.Write(hdr)
	a.Write(data)
	return binary.BigEndian.AppendUint32(out, a.Sum32())
}
