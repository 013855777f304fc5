package sampling

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParamsDeclaredOnce: keys, flags and llama.cpp names are unique;
// every number's defaults are in its range; every stage is a samplers
// name or one of the stages outside the order.
func TestParamsDeclaredOnce(t *testing.T) {
	keys, flags, llama := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, p := range Params {
		assert.False(t, keys[p.Key], "key %s twice", p.Key)
		keys[p.Key] = true
		if p.Flag != "" {
			assert.False(t, flags[p.Flag], "flag %s twice", p.Flag)
			flags[p.Flag] = true
		}
		assert.False(t, llama[p.LlamaCpp], "llama.cpp flag %s twice", p.LlamaCpp)
		llama[p.LlamaCpp] = true
		assert.Contains(t, []string{Standard, DRY, Host}, p.Plugin, p.Key)
		assert.Equal(t, p.Plugin == Host, p.Type == Seed, "%s: the seed, and only it, is the host's", p.Key)
		assert.NotEmpty(t, p.Usage, p.Key)
		if p.Number() {
			assert.True(t, p.Range.Contains(p.Default), "%s: default %v outside %s", p.Key, p.Default, p.Want())
			assert.True(t, p.Range.Contains(p.ServerDefault()), "%s: server default outside %s", p.Key, p.Want())
			assert.Empty(t, p.DefaultText, p.Key)
		} else {
			assert.NotEmpty(t, p.DefaultText, p.Key)
		}
		switch p.Stage {
		case "logit bias", "mirostat", "order", "draw":
		default:
			_, err := Stages([]string{p.Stage})
			assert.NoError(t, err, "%s: stage %q", p.Key, p.Stage)
		}
	}
}

func TestRangeWant(t *testing.T) {
	for _, tt := range []struct {
		key, want string
	}{
		{"temperature", ">= 0"}, {"top_p", "in [0, 1]"}, {"repeat_penalty", "> 0"}, {"repeat_last_n", ">= -1"},
		{"presence_penalty", "in [-2, 2]"}, {"top_n_sigma", "-1 or >= 0 (-1 and 0 are off)"},
		{"xtc_threshold", "in [0, 0.5]"}, {"mirostat", "0 or 1 (2 is the mirostat-v2 sampler)"}, {"dry_base", ">= 1"},
	} {
		p, ok := Lookup(tt.key)
		require.True(t, ok, tt.key)
		assert.Equal(t, tt.want, p.Want(), tt.key)
	}
}

func TestParamCheck(t *testing.T) {
	for _, tt := range []struct {
		key string
		v   float64
		ok  bool
		got string
	}{
		{"top_p", 1, true, ""}, {"top_p", 1.5, false, "1.5"}, {"top_p", math.Copysign(0, -1), true, ""},
		{"repeat_penalty", 0, false, "0"}, {"repeat_penalty", 1e-50, false, "1e-50"}, // 0 as a float32
		{"presence_penalty", 2.1, false, "2.1"}, {"presence_penalty", 2.0000000001, true, ""}, // 2 as a float32
		{"top_n_sigma", -1, true, ""}, {"top_n_sigma", -0.5, false, "-0.5"},
		{"temperature", math.NaN(), false, "NaN"}, {"temperature", math.Inf(1), true, ""},
	} {
		p, _ := Lookup(tt.key)
		err := p.Check(tt.v)
		if tt.ok {
			assert.NoError(t, err, "%s %v", tt.key, tt.v)
			continue
		}
		var re *RangeError
		require.ErrorAs(t, err, &re, "%s %v", tt.key, tt.v)
		assert.Equal(t, tt.key, re.Key)
		assert.Equal(t, tt.got, re.Got)
		assert.ErrorIs(t, err, ErrConfig)
	}
}

func TestKeysAndOf(t *testing.T) {
	assert.Equal(t, []string{"dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers"}, Keys(DRY))
	assert.Len(t, Of(Standard), len(Params)-len(Of(DRY))-len(Of(Host)))
	seed, ok := Lookup("seed")
	assert.True(t, ok)
	assert.Equal(t, []Param{seed}, Of(Host))
	assert.Equal(t, Seed, seed.Type)
	assert.False(t, seed.Number(), "no range: any 64-bit integer")
}
