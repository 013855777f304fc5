package server

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// prepareTimeout bounds an admitted request's preparation — waiting for
// the preparation pool, the chat template, tokenizing, schema and grammar
// compiles, its plugins' instances — so that a tenant's backlog of heavy
// requests is refused instead of growing.
const prepareTimeout = 30 * time.Second

// prepPool bounds the requests preparing at once: at most workers over all
// tenants (the cores), and at most half of them for one tenant, so that
// one tenant's heavy preparations (a 10,000-property schema compiles for
// seconds) leave cores to the decoding passes and to other tenants. The
// memory of preparations in flight is bounded with them: each compile is
// bounded by grammar.MaxGrammarElems, each plugin instance by its
// tenant's memory_pages. Safe for concurrent use.
type prepPool struct {
	all       chan struct{}
	perTenant int

	mu      sync.Mutex
	tenants map[string]chan struct{}
}

func newPrepPool(workers int) *prepPool {
	workers = max(workers, 1)
	return &prepPool{all: make(chan struct{}, workers), perTenant: max(workers/2, 1), tenants: map[string]chan struct{}{}}
}

// acquire waits for a place of tenant's and of the pool; ctx ending first
// is its error.
func (p *prepPool) acquire(ctx context.Context, tenant string) (release func(), err error) {
	p.mu.Lock()
	own := p.tenants[tenant]
	if own == nil {
		own = make(chan struct{}, p.perTenant)
		p.tenants[tenant] = own
	}
	p.mu.Unlock()
	select {
	case own <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case p.all <- struct{}{}:
	case <-ctx.Done():
		<-own
		return nil, ctx.Err()
	}
	return func() { <-p.all; <-own }, nil
}

// Bounds of the compile cache.
const (
	compileCachePerTenant = 32
	compileCacheTotal     = 256
)

// compileCache keeps the outcome of each tenant's schema and grammar
// compiles, keyed by the sha256 of what was compiled, so that a repeated
// schema costs nothing; a refusal is kept too, so a repeated bad schema
// costs nothing either. Entries are per tenant: no tenant learns from
// timing which schemas another one sends. Least recently used entries go
// first. Safe for concurrent use.
type compileCache struct {
	mu      sync.Mutex
	lru     *list.List // of *compiled, most recent first
	byKey   map[compileKey]*list.Element
	tenants map[string]int
}

type compileKey struct {
	tenant string
	sum    [sha256.Size]byte
}

type compiled struct {
	key      compileKey
	cfg      json.RawMessage
	warnings []string // what the schema asks and the grammar does not enforce (compileSpec)
	err      error
}

func newCompileCache() *compileCache {
	return &compileCache{lru: list.New(), byKey: map[compileKey]*list.Element{}, tenants: map[string]int{}}
}

// get returns the kept outcome for key.
func (c *compileCache) get(key compileKey) (*compiled, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*compiled), true
}

// put keeps v, dropping the tenant's least recently used entry past
// compileCachePerTenant and the least recently used of all past
// compileCacheTotal.
func (c *compileCache) put(v *compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[v.key]; ok {
		return
	}
	c.byKey[v.key] = c.lru.PushFront(v)
	c.tenants[v.key.tenant]++
	if c.tenants[v.key.tenant] > compileCachePerTenant {
		for e := c.lru.Back(); e != nil; e = e.Prev() {
			if e.Value.(*compiled).key.tenant == v.key.tenant {
				c.remove(e)
				break
			}
		}
	}
	for c.lru.Len() > compileCacheTotal {
		c.remove(c.lru.Back())
	}
}

func (c *compileCache) remove(e *list.Element) {
	v := c.lru.Remove(e).(*compiled)
	delete(c.byKey, v.key)
	if c.tenants[v.key.tenant]--; c.tenants[v.key.tenant] <= 0 {
		delete(c.tenants, v.key.tenant)
	}
}

// len is the number of entries (tests).
func (c *compileCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// grammarSpec is what a request asks the grammar processor for, read
// without compiling anything: a JSON Schema (response_format json_schema,
// or llama.cpp's json_schema field) or a GBNF grammar, and the field that
// gave it, by the request's own name (text.format on Responses).
type grammarSpec struct {
	schema json.RawMessage
	gbnf   *string
	param  string
}

// grammarSpecOf reads the request's schema or grammar, or nil for none.
// Giving more than one is a 400.
func grammarSpecOf(f *samplingFields) (*grammarSpec, error) {
	var g grammarSpec
	if present(f.ResponseFormat) {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict *bool           `json:"strict"`
			} `json:"json_schema"`
		}
		if json.Unmarshal(f.ResponseFormat, &rf) == nil && rf.Type == "json_schema" {
			if rf.JSONSchema == nil || !present(rf.JSONSchema.Schema) {
				return nil, badRequest(f.formatName(), `%s json_schema needs {"json_schema": {"name": ..., "schema": {...}}}`, f.formatName())
			}
			g.schema, g.param = rf.JSONSchema.Schema, f.formatName()
		}
	}
	n := 0
	for _, on := range []bool{g.schema != nil, present(f.JSONSchema), f.Grammar != nil} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, badRequest("grammar", "give one of %s json_schema, json_schema and grammar", f.formatName())
	case present(f.JSONSchema):
		g.schema, g.param = f.JSONSchema, "json_schema"
	case f.Grammar != nil:
		g.gbnf, g.param = f.Grammar, "grammar"
	case g.schema == nil:
		return nil, nil
	}
	return &g, nil
}

// compileGrammar converts and compiles g for tenant, once per distinct
// schema or grammar (compileCache), and returns the grammar processor's
// config and the schema's warnings (compileSpec), which it logs once per
// compile. A schema or grammar the engine cannot enforce exactly is a 400
// naming the field (and the keyword, or the grammar's line and column).
func (s *Server) compileGrammar(tenant string, g *grammarSpec) (json.RawMessage, []string, error) {
	h := sha256.New()
	h.Write([]byte(g.param))
	h.Write([]byte{0})
	if g.gbnf != nil {
		h.Write([]byte(*g.gbnf))
	} else {
		h.Write(g.schema)
	}
	key := compileKey{tenant: tenant}
	h.Sum(key.sum[:0])
	if v, ok := s.compiled.get(key); ok {
		return v.cfg, v.warnings, v.err
	}
	cfg, warnings, err := compileSpec(g)
	for _, w := range warnings {
		s.log.Warn("schema keyword not enforced", "tenant", tenant, "warning", w)
	}
	s.compiled.put(&compiled{key: key, cfg: cfg, warnings: warnings, err: err})
	return cfg, warnings, err
}

// compileSpec compiles g (see compileGrammar). Its warnings name what a
// schema asks and the grammar does not enforce, a format JSON Schema does
// not define (grammar.Warning), after the request field:
// "response_format: format \"int32\" at #/properties/n is not enforced: …".
func compileSpec(g *grammarSpec) (json.RawMessage, []string, error) {
	if g.gbnf != nil {
		if _, err := grammar.Compile(*g.gbnf); err != nil {
			// The grammar package's errors name it already ("grammar:
			// line 1, column 12: …").
			e := badRequest("grammar", "%v", err)
			e.Code = "invalid_grammar"
			return nil, nil, e
		}
		return plugins.Grammar{GBNF: *g.gbnf}.Config(), nil, nil
	}
	src, ws, err := grammar.FromJSONSchemaWarnings(g.schema)
	if err == nil {
		_, err = grammar.Compile(src)
	}
	if err != nil {
		e := badRequest(g.param, "%s: the schema cannot be enforced: %v", g.param, err)
		e.Code = "unsupported_schema"
		return nil, nil, e
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, g.schema); err != nil {
		return nil, nil, badRequest(g.param, "%s: %v", g.param, err)
	}
	return plugins.Grammar{JSONSchema: buf.Bytes()}.Config(), schemaWarnings(g.param, ws), nil
}

// schemaWarnings are ws as a response gives them, after the request
// field whose schema they are about (nil for none).
func schemaWarnings(param string, ws []grammar.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, param+": "+w.String())
	}
	return out
}

// prepare does an admitted request's costly work in its tenant's share of
// the preparation pool, under prepareTimeout: decoding and validating its
// body (decode), the chat template and tokenizing, the schema, grammar
// and tool compiles (each once), and the policies' instances (Close them
// after the turn). Running past the deadline is a 429 for the tenant,
// whose own backlog it is.
func (s *Server) prepare(ctx context.Context, t *tenancy.Tenant, body []byte, decode func([]byte) (prepared, error)) (prepared, *policies, error) {
	ctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	release, err := s.prep.acquire(ctx, t.Name)
	if err != nil {
		return prepared{}, nil, prepareError(ctx, err)
	}
	defer release()
	p, err := decode(body)
	if err != nil {
		return p, nil, err
	}
	if err := s.tokenizePrompt(ctx, &p); err != nil {
		return p, nil, prepareError(ctx, err)
	}
	p.spec = s.speculationOf(&p)
	pr, err := s.policyRequest(t, &p)
	if err != nil {
		return p, nil, err
	}
	pr.draftMax = p.spec.draftMax
	pol, err := s.buildPolicies(ctx, t, pr)
	if err != nil {
		return p, nil, prepareError(ctx, err)
	}
	return p, pol, nil
}

// prepareError is err, or a 429 when the preparation deadline ended it.
func prepareError(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "preparation_timeout",
			RetryAfter: prepareTimeout / 2,
			Message:    "your requests' preparation (templates, schema compiles, plugins) took over " + prepareTimeout.String() + "; send fewer at once"}
	}
	return err
}

// policyRequest is what p asks of its policies: the stop strings, JSON
// mode, and the grammar of its schema, its grammar or its tools.
func (s *Server) policyRequest(t *tenancy.Tenant, p *prepared) (policyRequest, error) {
	f := p.fields
	pr := policyRequest{fields: f, stopText: f.Stop}
	jsonObject, err := responseFormat(f.ResponseFormat, f.formatName())
	if err != nil {
		return pr, err
	}
	spec, err := grammarSpecOf(f)
	if err != nil {
		return pr, err
	}
	if spec != nil {
		if jsonObject {
			return pr, badRequest(f.formatName(), "%s json_object and a schema or grammar exclude each other", f.formatName())
		}
		if pr.grammar, pr.warnings, err = s.compileGrammar(t.Name, spec); err != nil {
			return pr, err
		}
	}
	if p.tools.active() {
		if pr.grammar != nil || jsonObject {
			return pr, badRequest("tools", "tools (with tool_choice other than none) and %s json_object, json_schema or grammar exclude each other", f.formatName())
		}
		if pr.grammar, err = p.tools.grammarConfig(); err != nil {
			return pr, err
		}
		for _, tool := range p.tools.tools {
			pr.warnings = append(pr.warnings, tool.Warnings...)
		}
		pr.grammarParam = "tools"
	}
	// JSON mode's budget: the turn's (serving's rule), so that a turn cut
	// by max_tokens still ends with a whole object.
	budget := p.maxTokens
	if budget == 0 {
		budget = max(s.model.Forward.ContextLength()-len(p.prompt), 0)
	}
	// The grammar processor gets only a budget the request names: its
	// config keys the kept samplers (idleSamplers, whose init is seconds),
	// and a budget from the prompt's length would differ every request.
	if pr.grammar != nil && p.maxTokens > 0 {
		var g plugins.Grammar
		if err := json.Unmarshal(pr.grammar, &g); err != nil {
			return pr, err
		}
		g.MaxTokens = p.maxTokens
		pr.grammar = g.Config()
	}
	if jsonObject {
		pr.json = plugins.JSONMode{EOG: s.model.Tokenizer.EOG(), Control: s.model.Tokenizer.Control(), MaxTokens: budget}.Config()
	}
	return pr, nil
}
