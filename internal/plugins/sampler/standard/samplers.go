package standard

import "github.com/realizar-host/realizar-host/internal/plugins/sampling"

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

// parseSamplers reads the samplers config value as config_get answers it
// (sampling.ParseSamplers).
func parseSamplers(raw []byte) ([]string, error) { return sampling.ParseSamplers(raw) }

func stages(names []string) ([]byte, error) { return sampling.Stages(names) }

func hasStage(order []byte, st byte) bool { return sampling.HasStage(order, st) }
