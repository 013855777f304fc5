package sampling

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the README's table of sampling parameters from Params")

// The README's table lies between these lines.
const (
	tableBegin = "<!-- sampling parameters: generated from plugins/sampling.Params; go test ./plugins/sampling -run TestREADMETable -update -->\n"
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
	const path = "../../README.md"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(raw)
	begin := strings.Index(readme, tableBegin)
	end := strings.Index(readme, tableEnd)
	require.True(t, begin >= 0 && end > begin, "README: the table's marker lines")
	got := readme[begin+len(tableBegin) : end]
	want := markdownTable()
	if *update && got != want {
		readme = readme[:begin+len(tableBegin)] + want + readme[end:]
		require.NoError(t, os.WriteFile(path, []byte(readme), 0o644))
		got = want
	}
	assert.Equal(t, want, got, "README's table differs from Params: run go test ./plugins/sampling -run TestREADMETable -update")
}
