package ledger

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// sealRoom is the room encodeCacheFile leaves for the header: magic,
// version, kind, a 40-hex head, length and checksum take under 100 bytes.
const sealRoom = 128

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// sealAt is seal of b[room:], with the header written into the room
// before it (no copy of the payload) when it fits.
func sealAt(b []byte, room int, kind, head string) []byte {
	payload := b[room:]
	if head == "" {
		head = "-"
	}
	hdr := fmt.Sprintf("%s %d %s %s %d %08x\n", sealMagic, cacheVersion, kind, head, len(payload), crc32.Checksum(payload, crcTable))
	if len(hdr) > room {
		return append([]byte(hdr), payload...)
	}
	out := b[room-len(hdr):]
	copy(out, hdr)
	return out
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// Every cache file starts with a header line that names what it is, the
// version that wrote it, the ledger head it belongs to, the payload's
// length and its CRC-32:
//
//	rally-cache 9 state 3f2a...c1 25108 9a0b1c2d
//
// so a damaged, truncated or foreign file is detected before it is
// decoded, and rebuilt from the ledger.
const sealMagic = "rally-cache"

// crcTable is CRC-32 (IEEE), computed with the CPU's carry-less multiply:
// its tables cost microseconds to set up, where CRC-32's (the SSE 4.2
// instruction, plus the tables it combines streams with) cost 0.2 ms in
// every process that checks a cache file.
var crcTable = crc32.IEEETable

func seal(payload []byte, kind, head string) []byte {
	if head == "" {
		head = "-"
	}
	hdr := fmt.Sprintf("%s %d %s %s %d %08x\n", sealMagic, cacheVersion, kind, head, len(payload), crc32.Checksum(payload, crcTable))
	return append([]byte(hdr), payload...)
}

// openSealed returns the payload of a sealed file of the given kind (and
// head, unless head is "").
func openSealed(b []byte, kind, head string) ([]byte, bool) {
	payload, h, ok := openSealedHead(b, kind)
	if !ok || (head != "" && h != head) {
		return nil, false
	}
	return payload, true
}

func openSealedHead(b []byte, kind string) ([]byte, string, bool) {
	payload, head, _, ok := openSealedSum(b, kind)
	return payload, head, ok
}

// openSealedSum is openSealedHead that also returns the payload's CRC-32.
func openSealedSum(b []byte, kind string) ([]byte, string, uint32, bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 || i > 200 {
		return nil, "", 0, false
	}
	f := strings.Fields(string(b[:i]))
	if len(f) != 6 || f[0] != sealMagic || f[1] != strconv.Itoa(cacheVersion) || f[2] != kind {
		return nil, "", 0, false
	}
	n, err := strconv.Atoi(f[4])
	payload := b[i+1:]
	sum := crc32.Checksum(payload, crcTable)
	if err != nil || n != len(payload) || fmt.Sprintf("%08x", sum) != f[5] {
		return nil, "", 0, false
	}
	head := f[3]
	if head == "-" {
		head = ""
	}
	return payload, head, sum, true
}
