package main

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/turnfields"
)

// TestTurnFlagsMatchFields: every row of turnfields.Fields with a flag is
// a flag of run and chat with the row's help and default, and setting it
// (or not) reaches the turn's GenerateConfig field the row names. A row
// whose flag the CLI does not read fails here.
func TestTurnFlagsMatchFields(t *testing.T) {
	for _, tf := range turnfields.Fields {
		if tf.Flag == "" {
			continue
		}
		t.Run(tf.Flag, func(t *testing.T) {
			field, ok := reflect.TypeFor[engine.GenerateConfig]().FieldByName(tf.Config)
			require.True(t, ok, tf.Config)
			for _, c := range []struct {
				args []string
				want bool
			}{
				{nil, tf.Default},
				{[]string{"--" + tf.Flag + "=" + strconv.FormatBool(!tf.Default)}, !tf.Default},
				{[]string{"--" + tf.Flag + "=" + strconv.FormatBool(tf.Default)}, tf.Default},
			} {
				cmd := &cobra.Command{Use: "run"}
				f := &turnFlags{}
				f.register(cmd)
				flag := cmd.Flags().Lookup(tf.Flag)
				require.NotNil(t, flag, tf.Flag)
				assert.Equal(t, tf.Usage, flag.Usage)
				assert.Equal(t, strconv.FormatBool(tf.Default), flag.DefValue)

				require.NoError(t, cmd.Flags().Parse(c.args))
				cfg, err := f.config(cmd)
				require.NoError(t, err, c.args)
				assert.Equal(t, c.want, reflect.ValueOf(cfg).FieldByIndex(field.Index).Bool(), "%v", c.args)
			}
		})
	}
}
