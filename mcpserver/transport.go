package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine is the longest request line the server reads (1 MiB): 256 scopes
// of 256 bytes and a 64 KiB body fit many times over. A longer line is
// skipped as it streams past, so it never costs more memory than this.
const MaxLine = 1 << 20

// lineTransport is stdio as the server reads it: one JSON-RPC message a
// line. The SDK's own IO transport ends the session at the first line that
// is not one well-formed message (not JSON, a batch, a bad id, an oversized
// line); here such a line is answered with the JSON-RPC error it calls for,
// written beside the SDK's answers, and the SDK only ever sees well-formed
// single messages, so the server keeps serving.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	max int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	max := t.max
	if max <= 0 {
		max = MaxLine
	}
	go c.readLoop(bufio.NewReaderSize(t.in, 64<<10), max)
	return c, nil
}

type lineConn struct {
	wmu sync.Mutex // one message on the wire at a time
	out io.Writer

	incoming  chan jsonrpc.Message
	closed    chan struct{}
	closeOnce sync.Once
	errMu     sync.Mutex
	readErr   error // why incoming closed
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m, ok := <-c.incoming:
		if !ok {
			c.errMu.Lock()
			defer c.errMu.Unlock()
			return nil, c.readErr
		}
		return m, nil
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// readLoop hands each well-formed message to Read and answers the rest.
func (c *lineConn) readLoop(r *bufio.Reader, max int) {
	var err error
	defer func() {
		c.errMu.Lock()
		c.readErr = err
		c.errMu.Unlock()
		close(c.incoming)
	}()
	var buf []byte
	for {
		var tooLong bool
		buf, tooLong, err = readLine(r, buf[:0], max)
		if len(buf) > 0 || tooLong {
			msg, code, id, why := parseLine(buf, tooLong, max)
			if msg != nil {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					return
				}
			} else if code != 0 {
				if werr := c.writeLine(errorLine(id, code, why)); werr != nil {
					err = werr
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line into buf without its end; a line longer than max
// is read to its end and dropped (tooLong), so memory stays bounded.
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 { // room for \r\n
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if len(buf) > max {
			return nil, true, err
		}
		return buf, false, err
	}
}

// parseLine makes one line a message, or says which error answers it: code
// 0 with no message means nothing to answer (a blank line).
func parseLine(line []byte, tooLong bool, max int) (msg jsonrpc.Message, code int, id any, why string) {
	if tooLong {
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("invalid request: the line is longer than %d bytes", max)
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, 0, nil, ""
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		return nil, jsonrpc.CodeParseError, nil, fmt.Sprintf("parse error: %v", err)
	}
	switch trimmed[0] {
	case '[':
		// MCP has had no batches since protocol 2025-06-18; an empty one
		// is invalid in every version.
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: JSON-RPC batches are not supported; send one message a line"
	case '{':
	default:
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: a message is a JSON object"
	}
	m, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, idOf(trimmed), fmt.Sprintf("invalid request: %v", err)
	}
	return m, 0, nil, ""
}

// idOf is a malformed request's id when it is a valid one, else nil (null).
func idOf(obj []byte) any {
	var w struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(obj, &w) != nil {
		return nil
	}
	switch v := w.ID.(type) {
	case string, float64:
		return v
	}
	return nil
}

// errorLine is a JSON-RPC error response; its id is null when the request's
// could not be read, as JSON-RPC 2.0 §5 says.
func errorLine(id any, code int, msg string) []byte {
	b, _ := json.Marshal(struct {
		V     string `json:"jsonrpc"`
		ID    any    `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{V: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}
