package tokenizer

// A test-only GGUF metadata loader, used until the gguf package is merged.
// It reads the key/value section of a GGUF v2/v3 file and nothing else.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

type testMeta map[string]any

func readTestMeta(path string) (testMeta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr struct {
		Magic   [4]byte
		Version uint32
		NTensor uint64
		NKV     uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, err
	}
	if string(hdr.Magic[:]) != "GGUF" {
		return nil, fmt.Errorf("%s: not a GGUF file", path)
	}
	m := testMeta{}
	for i := uint64(0); i < hdr.NKV; i++ {
		k, err := readTestString(r)
		if err != nil {
			return nil, err
		}
		var typ uint32
		if err := binary.Read(r, binary.LittleEndian, &typ); err != nil {
			return nil, err
		}
		v, err := readTestValue(r, typ)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k, err)
		}
		m[k] = v
	}
	return m, nil
}

func readTestString(r io.Reader) (string, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

func readTestValue(r io.Reader, typ uint32) (any, error) {
	var b [8]byte
	fixed := map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	if n, ok := fixed[typ]; ok {
		if _, err := io.ReadFull(r, b[:n]); err != nil {
			return nil, err
		}
		u := binary.LittleEndian.Uint64(b[:])
		switch typ {
		case 0:
			return uint8(u), nil
		case 1:
			return int8(u), nil
		case 2:
			return uint16(u), nil
		case 3:
			return int16(u), nil
		case 4:
			return uint32(u), nil
		case 5:
			return int32(u), nil
		case 6:
			return math.Float32frombits(uint32(u)), nil
		case 7:
			return b[0] != 0, nil
		case 10:
			return u, nil
		case 11:
			return int64(u), nil
		default:
			return math.Float64frombits(u), nil
		}
	}
	switch typ {
	case 8:
		return readTestString(r)
	case 9:
		var et uint32
		var n uint64
		if err := binary.Read(r, binary.LittleEndian, &et); err != nil {
			return nil, err
		}
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			v, err := readTestValue(r, et)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown GGUF value type %d", typ)
}
