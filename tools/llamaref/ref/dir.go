package ref

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RootModule is the module path of the repository root, used to find it.
const RootModule = "github.com/realizar-host/realizar-host"

// EnvDir names the environment variable that overrides the reference folder.
const EnvDir = "LLAMAREF_DIR"

// ErrNotInstalled reports that the reference folder or one of its parts is
// missing. Errors wrapping it name the path and say how to install it.
var ErrNotInstalled = errors.New("llama.cpp reference not installed")

// ErrNoRepo reports that no enclosing realizar-host checkout was found.
var ErrNoRepo = errors.New("not inside a realizar-host checkout")

// ErrNoModel reports that a shared model file is absent.
var ErrNoModel = errors.New("shared model not found")

// RepoRoot returns the root of the realizar-host checkout that encloses the
// working directory: the nearest folder, walking up, whose go.mod declares
// [RootModule]. It returns an error wrapping [ErrNoRepo] when there is none.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoRepo, err)
	}
	for dir := wd; ; {
		if declaresRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w (searched up from %s)", ErrNoRepo, wd)
		}
		dir = parent
	}
}

// declaresRoot reports whether the go.mod at path declares RootModule.
func declaresRoot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == RootModule
		}
	}
	return false
}

// Dir returns the reference folder: $LLAMAREF_DIR when set, else
// <repo root>/.cache/llamaref. It checks that lib/libllama.so is there and
// otherwise returns an error wrapping [ErrNotInstalled] that names the path.
func Dir() (string, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("%w: %v (set %s)", ErrNotInstalled, err, EnvDir)
		}
		dir = filepath.Join(root, ".cache", "llamaref")
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "libllama.so")); err != nil {
		return "", fmt.Errorf("%w: no %s (run tools/llamaref/install.sh or set %s)",
			ErrNotInstalled, filepath.Join(dir, "lib", "libllama.so"), EnvDir)
	}
	return dir, nil
}

// VocabPath returns the path of llama.cpp's vocabulary-only GGUF named name
// (for example "llama-spm" for ggml-vocab-llama-spm.gguf) in the reference
// folder dir, or an error wrapping [ErrNotInstalled] when it is absent.
func VocabPath(dir, name string) (string, error) {
	path := filepath.Join(dir, "vocab", "ggml-vocab-"+name+".gguf")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: no %s", ErrNotInstalled, path)
	}
	return path, nil
}

// SharedModel returns the path of a model shared by every checkout,
// <repo root>/../shared/models/name. In a linked git worktree the main
// checkout's ../shared/models is tried too. The error wraps [ErrNoModel] and
// names the paths looked at.
func SharedModel(name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var tried []string
	for _, r := range []string{root, mainWorktree(root)} {
		if r == "" {
			continue
		}
		path := filepath.Join(filepath.Dir(r), "shared", "models", name)
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
		tried = append(tried, path)
	}
	return "", fmt.Errorf("%w: %s (models are read from ../shared/models relative to the repository root)",
		ErrNoModel, strings.Join(tried, ", "))
}

// mainWorktree returns the main checkout of the linked git worktree at root
// (whose .git is a file "gitdir: <main>/.git/worktrees/<name>"), or "".
func mainWorktree(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	common, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	dir := strings.TrimSpace(string(common))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitdir, dir)
	}
	return filepath.Dir(filepath.Clean(dir))
}
