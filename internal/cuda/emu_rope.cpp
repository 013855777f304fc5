//go:build cudaemu && !cuda

// kernels/rope.cu compiled for the host kernel emulator (cudaemu builds).
#define KERNEL_EMU
#include "testdata/emu/emu.h"
#include "kernels/rope.cu"
