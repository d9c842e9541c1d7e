package realhost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one tool call the scripted model makes. The test puts the whole
// script in the prompt (base64 after "RALLYSCRIPT:"), so one server serves
// every session and host: for each request it counts the tool results in
// the conversation and answers with the next step, or with a final text.
type step struct {
	Tool  string         `json:"tool"`  // the host's tool name
	Input map[string]any `json:"input"` // its arguments
	// Custom is the raw input of a freeform (custom) tool, Codex's apply_patch.
	Custom string `json:"custom,omitempty"`
	// Namespace is the namespace of a tool Codex found with tool_search
	// (its MCP servers' tools are offered only that way).
	Namespace string `json:"namespace,omitempty"`
}

func script(steps ...step) string {
	b, _ := json.Marshal(steps)
	return "Follow the test script. RALLYSCRIPT:" + base64.StdEncoding.EncodeToString(b) + ":END"
}

var scriptRE = regexp.MustCompile(`RALLYSCRIPT:([A-Za-z0-9+/=]+):END`)

// modelServer is a scripted model on 127.0.0.1 speaking the Anthropic
// Messages API, the OpenAI Responses API and the Gemini API.
type modelServer struct {
	t    *testing.T
	url  string
	srv  *http.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	path string
	body string
}

func startServer(t *testing.T) *modelServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &modelServer{t: t, url: "http://" + ln.Addr().String()}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	t.Cleanup(func() { m.srv.Close() })
	return m
}

// bodies returns every request body received so far whose path contains sub.
func (m *modelServer) bodies(sub string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, r := range m.reqs {
		if strings.Contains(r.path, sub) {
			out = append(out, r.body)
		}
	}
	return out
}

// saw says whether any request body contains s.
func (m *modelServer) saw(s string) bool {
	for _, b := range m.bodies("") {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	m.mu.Lock()
	m.reqs = append(m.reqs, recorded{path: r.URL.Path, body: string(body)})
	m.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case strings.HasSuffix(r.URL.Path, "/v1/messages"):
		m.anthropic(w, body)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		m.responses(w, body)
	case strings.Contains(r.URL.Path, ":streamGenerateContent"):
		m.gemini(w, body, true)
	case strings.Contains(r.URL.Path, ":generateContent"):
		m.gemini(w, body, false)
	case strings.Contains(r.URL.Path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case strings.HasSuffix(r.URL.Path, "/models"):
		writeJSON(w, map[string]any{"data": []any{}, "models": []any{}})
	default:
		writeJSON(w, map[string]any{})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// next decides the model's move from the request: the last script found in
// it (a later message, such as a delivered handoff, may bring its own), and
// how many tool results the conversation carries after it. A step's input
// may say RALLYACK: the last "git rally receipt <id>" the request holds
// (the command a delivered handoff ends with) takes its place.
func next(body []byte, results int) (step, bool) {
	all := scriptRE.FindAllSubmatchIndex(body, -1)
	if all == nil {
		return step{}, false
	}
	mm := all[len(all)-1]
	if len(all) > 1 {
		results = countResults(body[mm[1]:])
	}
	raw, err := base64.StdEncoding.DecodeString(string(body[mm[2]:mm[3]]))
	if err != nil {
		return step{}, false
	}
	if acks := ackRE.FindAll(body, -1); len(acks) > 0 {
		raw = bytes.ReplaceAll(raw, []byte("RALLYACK"), acks[len(acks)-1])
	}
	var steps []step
	if json.Unmarshal(raw, &steps) != nil || results >= len(steps) {
		return step{}, false
	}
	return steps[results], true
}

var ackRE = regexp.MustCompile(`git rally receipt f_[0-9a-f]{16}`)

// countResults counts the tool results of any of the three wires.
func countResults(b []byte) int {
	n := 0
	for _, k := range []string{`"type":"tool_result"`, `"type":"function_call_output"`, `"type":"custom_tool_call_output"`,
		`"type":"tool_search_output"`, `"functionResponse"`} {
		n += bytes.Count(b, []byte(k))
	}
	return n
}

type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	return sse{w}
}

func (s sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropic answers POST /v1/messages (streaming or not).
func (m *modelServer) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	results := bytes.Count(body, []byte(`"type":"tool_result"`))
	// Only the main conversation follows the script: side requests
	// (titles, summaries) carry no tools and get plain text.
	st, ok := next(body, results)
	if !bytes.Contains(body, []byte(`"tools":[`)) {
		ok = false
	}
	id := fmt.Sprintf("msg_%d", time.Now().UnixNano())
	var block map[string]any
	stop := "end_turn"
	if ok {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", time.Now().UnixNano()), "name": st.Tool, "input": st.Input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": "done"}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if ok {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": st.Tool, "input": map[string]any{}}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		in, _ := json.Marshal(st.Input)
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": "done"}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// responses answers POST /v1/responses (OpenAI Responses API, streaming),
// Codex's wire.
func (m *modelServer) responses(w http.ResponseWriter, body []byte) {
	results := bytes.Count(body, []byte(`"type":"function_call_output"`)) + bytes.Count(body, []byte(`"type":"custom_tool_call_output"`)) +
		bytes.Count(body, []byte(`"type":"tool_search_output"`))
	st, ok := next(body, results)
	id := fmt.Sprintf("resp_%d", time.Now().UnixNano())
	s := newSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	var item map[string]any
	callID := fmt.Sprintf("call_%d", time.Now().UnixNano())
	switch {
	case ok && st.Tool == "tool_search":
		item = map[string]any{"type": "tool_search_call", "id": "tsc_" + callID, "call_id": callID, "execution": "client", "status": "completed", "arguments": st.Input}
	case ok && st.Custom != "":
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "call_id": callID, "name": st.Tool, "input": st.Custom, "status": "completed"}
	case ok:
		args, _ := json.Marshal(st.Input)
		item = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": st.Tool, "arguments": string(args), "status": "completed"}
		if st.Namespace != "" {
			item["namespace"] = st.Namespace
		}
	default:
		item = map[string]any{"type": "message", "id": "msg_" + callID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "status": "completed",
		"output": []any{item},
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}})
}

// gemini answers generateContent and streamGenerateContent (alt=sse).
func (m *modelServer) gemini(w http.ResponseWriter, body []byte, stream bool) {
	results := bytes.Count(body, []byte(`"functionResponse"`))
	st, ok := next(body, results)
	if !bytes.Contains(body, []byte(`"functionDeclarations"`)) {
		ok = false
	}
	part := map[string]any{"text": "done"}
	if ok {
		part = map[string]any{"functionCall": map[string]any{"name": st.Tool, "args": st.Input}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-test",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}

// responsesItem is an input item of a Responses API request, as far as the
// suite reads them.
type responsesItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Output    any    `json:"output"`
	Tools     []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
}

// responsesInput is every input item of the Responses requests received.
func (m *modelServer) responsesInput() [][]responsesItem {
	var out [][]responsesItem
	for _, b := range m.bodies("/responses") {
		var req struct {
			Input []responsesItem `json:"input"`
		}
		if json.Unmarshal([]byte(b), &req) == nil {
			out = append(out, req.Input)
		}
	}
	return out
}

// searchFound lists the tools of namespace that a tool_search_output
// carried back to the model.
func (m *modelServer) searchFound(namespace string) []string {
	var names []string
	for _, input := range m.responsesInput() {
		for _, it := range input {
			if it.Type != "tool_search_output" {
				continue
			}
			for _, ns := range it.Tools {
				if ns.Type == "namespace" && ns.Name == namespace {
					for _, tool := range ns.Tools {
						names = append(names, tool.Name)
					}
				}
			}
		}
		if names != nil {
			return names
		}
	}
	return names
}

// callOutput is the output Codex sent back for the model's call of
// namespace's tool name (as JSON text), "" when none came back.
func (m *modelServer) callOutput(namespace, name string) string {
	for _, input := range m.responsesInput() {
		calls := map[string]bool{}
		for _, it := range input {
			switch it.Type {
			case "function_call":
				if it.Namespace == namespace && it.Name == name {
					calls[it.CallID] = true
				}
			case "function_call_output":
				if calls[it.CallID] {
					b, _ := json.Marshal(it.Output)
					return string(b)
				}
			}
		}
	}
	return ""
}
