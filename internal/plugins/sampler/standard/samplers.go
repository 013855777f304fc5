package standard

import "github.com/realizar-host/realizar-host/internal/plugins/sampling"

// DefaultSamplers is llama.cpp's default order of the chain
// (sampling.DefaultSamplers).
var DefaultSamplers = sampling.DefaultSamplers

// Stage codes (sampling's).
const (
	stagePenalties = sampling.StagePenalties
	stageSigma     = sampling.StageSigma
	stageTopK      = sampling.StageTopK
	stageTypical   = sampling.StageTypical
	stageTopP      = sampling.StageTopP
	stageMinP      = sampling.StageMinP
	stageXTC       = sampling.StageXTC
	stageTemp      = sampling.StageTemp
)

// SamplerError is a samplers entry the sampler refuses (sampling's).
type SamplerError = sampling.SamplerError

// ParseSamplers reads the samplers config value as config_get answers it
// (sampling.ParseSamplers).
func ParseSamplers(raw []byte) ([]string, error) { return sampling.ParseSamplers(raw) }

// ListsDRY reports whether the samplers entries (nil: DefaultSamplers)
// name dry (sampling.ListsDRY).
func ListsDRY(names []string) bool { return sampling.ListsDRY(names) }

func stages(names []string) ([]byte, error) { return sampling.Stages(names) }

func hasStage(order []byte, st byte) bool { return sampling.HasStage(order, st) }
