package engine_test

const testVocab = 32
