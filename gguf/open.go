package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
)

// Split-file metadata keys (llama.cpp's gguf-split).
const (
	KeySplitNo           = "split.no"            // uint16, 0-based shard index
	KeySplitCount        = "split.count"         // uint16, number of shards
	KeySplitTensorsCount = "split.tensors.count" // int32, tensors in all shards
)

// splitName matches a shard path: "<prefix>-00001-of-00003.gguf".
var splitName = regexp.MustCompile(`^(.*)-([0-9]{5})-of-([0-9]{5})\.gguf$`)

// SplitPath returns the path of shard no (0-based) of count for a model
// whose shards share prefix: SplitPath("m", 0, 3) is "m-00001-of-00003.gguf".
func SplitPath(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

// Open maps the GGUF file at path into memory and parses it. When the file
// is the first shard of a split model (split.count > 1), Open also loads
// the other shards, named as SplitPath names them, and the File lists the
// tensors of all of them.
//
// On Linux, macOS and the BSDs the file is mapped read-only with mmap, so
// TensorData returns views without copying and without reading the whole
// file; elsewhere Open reads the file into memory.
//
// Errors: the *os.PathError of a failed open; a *FormatError (wrapping a
// sentinel, ErrSplit for a missing or inconsistent shard) for malformed
// input. Every error names the path.
func Open(path string) (*File, error) {
	first, err := openShard(path)
	if err != nil {
		return nil, err
	}
	shards := []*shard{first}
	f, err := openSplit(path, &shards)
	if err != nil {
		for _, s := range shards {
			if s.close != nil {
				_ = s.close()
			}
		}
		return nil, err
	}
	return f, nil
}

// openSplit loads the shards after the first (*shards holds it) and appends
// each to *shards as it is opened, so the caller can release them on error.
func openSplit(path string, shards *[]*shard) (*File, error) {
	first, err := newFileFromShards(*shards)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := first.Lookup(KeySplitCount); !ok {
		return first, nil
	}
	count, err := first.Uint32(KeySplitCount)
	if err != nil {
		return nil, splitErr(path, "split.count as an integer", err)
	}
	no, err := first.Uint32(KeySplitNo)
	if err != nil && !errors.Is(err, ErrKeyNotFound) {
		return nil, splitErr(path, "split.no as an integer", err)
	}
	if count <= 1 {
		return first, nil
	}
	if no != 0 {
		return nil, splitErr(path, fmt.Sprintf("the first shard (split.no 0), found split.no %d", no), nil)
	}
	m := splitName.FindStringSubmatch(path)
	if m == nil {
		return nil, splitErr(path, "a shard name like model-00001-of-00002.gguf", nil)
	}
	for i := 1; i < int(count); i++ {
		p := SplitPath(m[1], i, int(count))
		s, err := openShard(p)
		if err != nil {
			return nil, err
		}
		*shards = append(*shards, s)
		one, _ := newFileFromShards([]*shard{s})
		if n, err := one.Uint32(KeySplitNo); err != nil || n != uint32(i) {
			return nil, splitErr(p, fmt.Sprintf("split.no %d", i), err)
		}
		if n, err := one.Uint32(KeySplitCount); err != nil || n != count {
			return nil, splitErr(p, fmt.Sprintf("split.count %d", count), err)
		}
	}
	f, err := newFileFromShards(*shards)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if want, err := first.Uint64(KeySplitTensorsCount); err == nil && want != uint64(len(f.Tensors)) {
		return nil, splitErr(path, fmt.Sprintf("%d tensors across the shards (split.tensors.count), found %d",
			want, len(f.Tensors)), nil)
	}
	return f, nil
}

func splitErr(path, what string, cause error) error {
	err := ErrSplit
	if cause != nil {
		err = errors.Join(ErrSplit, cause)
	}
	return fmt.Errorf("%s: %w", path, &FormatError{What: what, Err: err})
}

// openShard maps and parses one file.
func openShard(path string) (*shard, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	data, unmap, err := mapFile(fd, size)
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	s, err := parseShard(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if unmap != nil {
			_ = unmap()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.data = data
	s.close = unmap
	s.mapped = unmap != nil
	return s, nil
}
