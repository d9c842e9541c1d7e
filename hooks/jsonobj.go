package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// object is a JSON object that keeps its keys in file order, so merging
// rally's entries into a settings file leaves everything else where it
// was. Values stay raw until someone looks inside them.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

// parseObject reads a JSON object; empty input is an empty object.
func parseObject(b []byte) (*object, error) {
	o := newObject()
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("bad object key")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return o, nil
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces a key's value in place, or appends the key.
func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) empty() bool { return len(o.keys) == 0 }

// compact encodes the object on one line, keys in order.
func (o *object) compact() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, o.vals[k]); err != nil {
			b.Write(o.vals[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// format encodes the object the way a settings file is written: indented
// with indent, with a final newline when nl.
func (o *object) format(indent string, nl bool) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.compact(), "", indent); err != nil {
		return o.compact()
	}
	if nl {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// style finds how a file is indented and whether it ends in a newline;
// a new or one-line file gets two spaces and a newline.
func style(b []byte) (indent string, nl bool) {
	indent, nl = "  ", true
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	nl = bytes.HasSuffix(b, []byte("\n"))
	lines := bytes.Split(b, []byte("\n"))
	for _, l := range lines[1:] {
		trim := bytes.TrimLeft(l, " \t")
		if len(trim) == 0 || len(trim) == len(l) {
			continue
		}
		indent = string(l[:len(l)-len(trim)])
		break
	}
	return
}

// canonical is a value re-encoded with sorted keys, for comparing entries
// whatever their formatting.
func canonical(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	b, _ := json.Marshal(x)
	return string(b)
}
