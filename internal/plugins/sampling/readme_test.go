package sampling

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the README's table of sampling parameters from Params")

// The README's table lies between these lines.
const (
	tableBegin = "<!-- sampling parameters: generated from internal/plugins/sampling.Params; go test ./internal/plugins/sampling -run TestREADMETable -update -->\n"
	tableEnd   = "<!-- end of sampling parameters -->\n"
)

// markdownTable is Params as the README's table.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| stage | config key = server field | llama.cpp flag | OpenAI | type | range | CLI flag | default (CLI, `--sampler-config`) | server default | read by |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, p := range Params {
		stage := p.Stage
		if _, err := Stages([]string{p.Stage}); err == nil {
			stage = "`" + p.Stage + "`"
		}
		openai, flagName, rng, def, server := "", "—", "", p.DefaultText, p.DefaultText
		if p.OpenAI {
			openai = "yes"
		}
		if p.Flag != "" {
			flagName = "`--" + p.Flag + "`"
		}
		if p.Number() {
			rng, def, server = p.Want(), f(p.Default), f(p.ServerDefault())
		}
		if p.Type == Order {
			def, server = "`"+def+"`", "the same"
		}
		plugin := "`" + p.Plugin + "` sampler"
		switch p.Plugin {
		case DRY:
			plugin = "`dry` processor"
		case Host:
			plugin = "the host (every plugin's reset)"
		}
		b.WriteString("| " + strings.Join([]string{stage, "`" + p.Key + "`", "`" + p.LlamaCpp + "`", openai, p.Type.String(),
			rng, flagName, def, server, plugin}, " | ") + " |\n")
	}
	return b.String()
}

// TestREADMETable: the README's table of sampling parameters is
// markdownTable's (with -update, it is rewritten).
func TestREADMETable(t *testing.T) {
	testenv.Generated(t, "../../../README.md", tableBegin, tableEnd, markdownTable(), *update, "go test ./internal/plugins/sampling -run TestREADMETable -update")
}
