/*
 * nvrtc-ptx: compiles one CUDA C source to PTX, or to a CUBIN (machine code
 * for one GPU generation), with NVRTC (no GPU needed).
 *
 *   nvrtc-ptx ARCH IN.cu OUT        ARCH compute_NN: PTX; sm_NN: CUBIN
 *
 * Exit status 1 when the compiler reports anything in its log (a warning is
 * a failure), 2 on a usage or I/O error. Built by scripts/cuda-ptx.sh
 * against NVRTC's header and library from .cache/cuda.
 */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(n + 1);
    if (!s || fread(s, 1, n, f) != (size_t)n) {
        fclose(f);
        return NULL;
    }
    s[n] = 0;
    fclose(f);
    return s;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: nvrtc-ptx ARCH IN.cu OUT.ptx\n");
        return 2;
    }
    char *src = slurp(argv[2]);
    if (!src) {
        fprintf(stderr, "nvrtc-ptx: cannot read %s\n", argv[2]);
        return 2;
    }
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", argv[1]);
    const char *opts[] = {arch, "--std=c++14", "--device-as-default-execution-space", "-default-device"};
    const char *name = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS) return 2;
    nvrtcResult rc = nvrtcCompileProgram(prog, 3, opts);
    size_t logSize = 0;
    nvrtcGetProgramLogSize(prog, &logSize);
    int warned = 0;
    if (logSize > 1) {
        char *log = malloc(logSize);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "%s: %s\n", argv[2], log);
        warned = 1;
        free(log);
    }
    if (rc != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtc-ptx: %s: %s\n", argv[2], nvrtcGetErrorString(rc));
        return 1;
    }
    size_t n;
    char *code;
    if (strncmp(argv[1], "sm_", 3) == 0) {
        nvrtcGetCUBINSize(prog, &n);
        code = malloc(n);
        nvrtcGetCUBIN(prog, code);
    } else {
        nvrtcGetPTXSize(prog, &n);
        code = malloc(n);
        nvrtcGetPTX(prog, code);
        n--; /* the PTX text without its NUL */
    }
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(code, 1, n, out) != n || fclose(out) != 0) {
        fprintf(stderr, "nvrtc-ptx: cannot write %s\n", argv[3]);
        return 2;
    }
    nvrtcDestroyProgram(&prog);
    return warned;
}
