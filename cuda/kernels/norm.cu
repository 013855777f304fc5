// RMSNorm: y[b][i] = x[b][i] / sqrt(mean_i(x[b]^2) + eps) * w[i].
// blockDim 256, grid n (one block per token). y may alias x.
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y, long long cols, float eps) {
    __shared__ float part[32];
    const float *xb = x + (long long)blockIdx.x * cols;
    float *yb = y + (long long)blockIdx.x * cols;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) s += xb[i] * xb[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) part[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < (int)(blockDim.x >> 5) ? part[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) part[0] = s;
    }
    __syncthreads();
    float scale = 1.0f / sqrtf(part[0] / (float)cols + eps); // IEEE, as the CPU's 1/sqrt
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) yb[i] = xb[i] * scale * w[i];
}
