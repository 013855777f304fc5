package model

// TEMPORARY test-only GGUF reader, until the gguf package is merged.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/realizar-host/realizar-host/q4k"
)

type tmpFile struct {
	meta    map[string]any
	tensors map[string]tmpTensor
	data    []byte
}

type tmpTensor struct {
	dims []int64
	typ  q4k.Type
	off  uint64
}

func tmpOpen(path string) (*tmpFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := &countReader{r: bufio.NewReader(f)}
	r := cr
	var hdr struct {
		Magic   [4]byte
		Version uint32
		NTensor uint64
		NKV     uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, err
	}
	tf := &tmpFile{meta: map[string]any{}, tensors: map[string]tmpTensor{}}
	for range hdr.NKV {
		k, err := tmpString(r)
		if err != nil {
			return nil, err
		}
		var typ uint32
		binary.Read(r, binary.LittleEndian, &typ)
		v, err := tmpValue(r, typ)
		if err != nil {
			return nil, err
		}
		tf.meta[k] = v
	}
	for range hdr.NTensor {
		name, _ := tmpString(r)
		var nd uint32
		binary.Read(r, binary.LittleEndian, &nd)
		dims := make([]int64, nd)
		for i := range dims {
			binary.Read(r, binary.LittleEndian, &dims[i])
		}
		var typ uint32
		var off uint64
		binary.Read(r, binary.LittleEndian, &typ)
		binary.Read(r, binary.LittleEndian, &off)
		tf.tensors[name] = tmpTensor{dims, q4k.Type(typ), off}
	}
	align := int64(32)
	if a, ok := tf.meta["general.alignment"].(uint32); ok {
		align = int64(a)
	}
	start := (cr.n + align - 1) / align * align
	tf.data = raw[start:]
	return tf, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (f *tmpFile) get(key string) (any, error) {
	v, ok := f.meta[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, errKeyNotFound)
	}
	return v, nil
}

func (f *tmpFile) String(key string) (string, error) {
	v, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: not a string", key)
	}
	return s, nil
}

func (f *tmpFile) Uint32(key string) (uint32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	s, ok := v.(uint32)
	if !ok {
		return 0, fmt.Errorf("%s: not a uint32", key)
	}
	return s, nil
}

func (f *tmpFile) Float32(key string) (float32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	s, ok := v.(float32)
	if !ok {
		return 0, fmt.Errorf("%s: not a float32", key)
	}
	return s, nil
}

func (f *tmpFile) tensor(name string) ([]int64, q4k.Type, []byte, error) {
	t, ok := f.tensors[name]
	if !ok {
		return nil, 0, nil, &TensorError{Tensor: name, Err: ErrMissingTensor}
	}
	n := int64(1)
	for _, d := range t.dims {
		n *= d
	}
	size, err := t.typ.RowSize(int(n))
	if err != nil {
		return nil, 0, nil, err
	}
	return t.dims, t.typ, f.data[t.off : t.off+uint64(size)], nil
}

func tmpString(r io.Reader) (string, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

func tmpValue(r io.Reader, typ uint32) (any, error) {
	var b [8]byte
	fixed := map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	if n, ok := fixed[typ]; ok {
		if _, err := io.ReadFull(r, b[:n]); err != nil {
			return nil, err
		}
		u := binary.LittleEndian.Uint64(b[:])
		switch typ {
		case 4:
			return uint32(u), nil
		case 5:
			return int32(u), nil
		case 6:
			return math.Float32frombits(uint32(u)), nil
		}
		return u, nil
	}
	switch typ {
	case 8:
		return tmpString(r)
	case 9:
		var et uint32
		var n uint64
		binary.Read(r, binary.LittleEndian, &et)
		binary.Read(r, binary.LittleEndian, &n)
		out := make([]any, n)
		for i := range out {
			v, err := tmpValue(r, et)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown GGUF value type %d", typ)
}
