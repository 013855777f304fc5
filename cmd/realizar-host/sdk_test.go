package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// TestStructuredSDKs (issue 32): the zod v4 shapes agents send —
// z.email(), z.uuid(), z.iso.date(), z.iso.datetime() (format and
// pattern), z.string().regex(r).max(n) (pattern and maxLength),
// z.record() and z.record(z.string().regex(r).max(n), …) (propertyNames)
// and z.number().min(0).max(1) (non-integer
// bounds) — through the Vercel AI SDK's generateObject
// (@ai-sdk/openai-compatible with supportsStructuredOutputs) and
// LangChain's withStructuredOutput (@langchain/openai, method
// "jsonSchema"), pinned npm versions, against serve on stories260K: every
// object the clients return parses with its schema
// (server/testdata/sdk/structured.mjs).
func TestStructuredSDKs(t *testing.T) {
	dir := testenv.SDKDir(t)
	_, base, logs := startServe(t, e2eBinary(t), "-m", storiesModel(t), "--threads", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testenv.SDKScript("structured.mjs"))
	cmd.Env = append(os.Environ(), "BASE_URL="+base, "API_KEY=none", "MODEL=stories260K", "SDK_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\nserve: %s", out, logs)
	for _, client := range []string{"generateObject", "withStructuredOutput"} {
		for _, shape := range []string{"email", "uuid", "date", "datetime", "regex-max", "record", "record-keys", "fraction"} {
			assert.True(t, strings.Contains(string(out), client+" "+shape+" ok"), "%s %s: %s", client, shape, out)
		}
	}
}
